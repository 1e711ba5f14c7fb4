export { MemberNodeClient, NodeClientBase, type ObjectStream, type Description, type DateWindow } from './member-node-client.js';
export { CoordinatingNodeClient } from './coordinating-node-client.js';
export { Transport, segment, readText, type ClientOptions, type RequestSpec, type RawResponse } from './transport.js';
export { multipartBody, type ObjectSource, type Part } from './multipart.js';
