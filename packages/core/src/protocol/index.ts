export * from './operations.js';
export * from './sysmeta-fields.js';
export * from './revision.js';
export * from './upload.js';
export * from './range.js';
