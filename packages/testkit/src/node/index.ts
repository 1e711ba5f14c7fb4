export { runNodeSuite, NODE_SUITE_GROUPS, type NodeSuiteOptions, type NodeSuiteGroup, type NodeSuiteGroupName } from './suite.js';
export { useNodeSuiteContext, type NodeSuiteContext, type NodeSuiteTarget, type CreateOptions as NodeSuiteCreateOptions } from './context.js';
export { registerCoreTests } from './core.js';
export { registerCreateTests } from './create.js';
export { registerReadTests } from './read.js';
export { registerListObjectsTests } from './list-objects.js';
export { registerLogRecordsTests } from './log-records.js';
export { registerUpdateTests } from './update.js';
export { registerArchiveDeleteTests } from './archive-delete.js';
export { registerAuthorizationTests } from './authorization.js';
export { registerIdentifiersTests } from './identifiers.js';
export { registerUpdateSystemMetadataTests } from './update-sysmeta.js';
export { registerErrorsTests } from './errors.js';
export {
  NodeClient, expectError, expectAnyError, expectDocument, expectIdentifierDocument, expectStatus, attr, child, childText, children,
  TYPES_V1, TYPES_V2, SUITE_USER_AGENT, type Caller, type NodeResponse, type RequestOptions,
} from './client.js';
export { multipartBody, multipartFormData, createParts, updateParts, type MultipartPart, type MultipartBody } from './multipart.js';
export { buildUploadSysmeta, buildSysmetaXml, encodeSysmeta, checksumOf, type SysmetaOptions } from './sysmeta.js';
export {
  validateXml, validateXmlDocuments, describeFailures, rootElementName, looksLikeXml, XmlBodyCollector,
  SCHEMA_DIR, TYPES_SCHEMA, ERRORS_SCHEMA, type XmlDocument, type XmlValidationFailure,
} from './xsd.js';
