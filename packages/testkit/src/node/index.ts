export { runNodeSuite, type NodeSuiteTarget } from './suite.js';
export {
  NodeClient, expectError, expectAnyError, expectDocument, expectIdentifierDocument, expectStatus,
  TYPES_V1, TYPES_V2, SUITE_USER_AGENT, type Caller, type NodeResponse, type RequestOptions,
} from './client.js';
export { multipartBody, multipartFormData, createParts, updateParts, type MultipartPart, type MultipartBody } from './multipart.js';
export { buildUploadSysmeta, buildSysmetaXml, encodeSysmeta, checksumOf, type SysmetaOptions } from './sysmeta.js';
export {
  validateXml, validateXmlDocuments, describeFailures, rootElementName, looksLikeXml, XmlBodyCollector,
  SCHEMA_DIR, TYPES_SCHEMA, ERRORS_SCHEMA, type XmlDocument, type XmlValidationFailure,
} from './xsd.js';
