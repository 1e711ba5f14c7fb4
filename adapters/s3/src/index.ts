export * from './s3-common.js';
export { sendOptions, type S3Entry, type S3ListOptions, type S3ObjectInfo, type S3ReadOptions, type S3StoreOptions } from './s3-base.js';
export * from './managed-storage.js';
export * from './bucket-storage.js';
