/**
 * TypeScript models of the DataONE types (v1, v1.1 and v2.0 schemas). Property names are the
 * XML element and attribute names, so the spec and the code can be searched together.
 * Repeated elements are always arrays; optional elements are `undefined` when absent.
 * v2-only fields are marked; encoding for v1 leaves them out.
 */

export type Subject = string;
export type NodeReference = string;
export type Identifier = string;

export type Permission = 'read' | 'write' | 'changePermission';
export const PERMISSIONS: readonly Permission[] = ['read', 'write', 'changePermission'];

export type ReplicationStatus = 'queued' | 'requested' | 'completed' | 'failed' | 'invalidated';
export const REPLICATION_STATUSES: readonly ReplicationStatus[] = ['queued', 'requested', 'completed', 'failed', 'invalidated'];

/** v1 Event enumeration; v2 log entries carry any non-empty string. */
export type EventV1 = 'create' | 'read' | 'update' | 'delete' | 'replicate' | 'synchronization_failed' | 'replication_failed';
export const EVENTS_V1: readonly EventV1[] = ['create', 'read', 'update', 'delete', 'replicate', 'synchronization_failed', 'replication_failed'];

export interface Checksum {
  algorithm: string;
  value: string;
}

export interface AccessRule {
  subject: Subject[];
  permission: Permission[];
}

export interface AccessPolicy {
  allow: AccessRule[];
}

export interface ReplicationPolicy {
  replicationAllowed?: boolean;
  numberReplicas?: number;
  preferredMemberNode: NodeReference[];
  blockedMemberNode: NodeReference[];
}

export interface Replica {
  replicaMemberNode: NodeReference;
  replicationStatus: ReplicationStatus;
  replicaVerified: Date;
}

export interface MediaTypeProperty {
  name: string;
  value: string;
}

/** v2 MediaType: a media type name with optional parameters. */
export interface MediaType {
  name: string;
  property: MediaTypeProperty[];
}

export interface SystemMetadata {
  serialVersion?: number;
  identifier: Identifier;
  formatId: string;
  size: number;
  checksum: Checksum;
  submitter?: Subject;
  rightsHolder: Subject;
  accessPolicy?: AccessPolicy;
  replicationPolicy?: ReplicationPolicy;
  obsoletes?: Identifier;
  obsoletedBy?: Identifier;
  archived?: boolean;
  dateUploaded?: Date;
  dateSysMetadataModified?: Date;
  originMemberNode?: NodeReference;
  authoritativeMemberNode?: NodeReference;
  replica: Replica[];
  /** v2 */
  seriesId?: Identifier;
  /** v2 */
  mediaType?: MediaType;
  /** v2 */
  fileName?: string;
}

export interface Slice {
  count: number;
  start: number;
  total: number;
}

export interface ObjectInfo {
  identifier: Identifier;
  formatId: string;
  checksum: Checksum;
  dateSysMetadataModified: Date;
  size: number;
}

export interface ObjectList extends Slice {
  objectInfo: ObjectInfo[];
}

export interface LogEntry {
  entryId: string;
  identifier: Identifier;
  ipAddress: string;
  userAgent: string;
  subject: Subject;
  /** v1: one of EVENTS_V1; v2: any non-empty string. */
  event: string;
  dateLogged: Date;
  nodeIdentifier: NodeReference;
}

export interface Log extends Slice {
  logEntry: LogEntry[];
}

export interface ChecksumAlgorithmList {
  algorithm: string[];
}

export interface ObjectFormat {
  formatId: string;
  formatName: string;
  formatType: string;
  /** v2 */
  mediaType?: MediaType;
  /** v2 */
  extension?: string;
}

export interface ObjectFormatList extends Slice {
  objectFormat: ObjectFormat[];
}

export interface ObjectLocation {
  nodeIdentifier: NodeReference;
  baseURL: string;
  version: string[];
  url: string;
  preference?: number;
}

export interface ObjectLocationList {
  identifier: Identifier;
  objectLocation: ObjectLocation[];
}

export interface ServiceMethodRestriction {
  methodName: string;
  subject: Subject[];
}

export interface Service {
  name: string;
  version: string;
  available?: boolean;
  restriction: ServiceMethodRestriction[];
}

export interface Schedule {
  hour: string;
  mday: string;
  min: string;
  mon: string;
  sec: string;
  wday: string;
  year: string;
}

export interface Synchronization {
  schedule: Schedule;
  lastHarvested?: Date;
  lastCompleteHarvest?: Date;
}

export interface NodeReplicationPolicy {
  maxObjectSize?: number;
  spaceAllocated?: number;
  allowedNode: NodeReference[];
  allowedObjectFormat: string[];
}

export interface Ping {
  success?: boolean;
  lastSuccess?: Date;
}

/** v2 node property (key/value). */
export interface Property {
  key: string;
  type?: string;
  value: string;
}

export type NodeType = 'mn' | 'cn' | 'Monitor';
export type NodeState = 'up' | 'down' | 'unknown';

export interface Node {
  replicate: boolean;
  synchronize: boolean;
  type: NodeType;
  state: NodeState;
  identifier: NodeReference;
  name: string;
  description: string;
  baseURL: string;
  services?: { service: Service[] };
  synchronization?: Synchronization;
  nodeReplicationPolicy?: NodeReplicationPolicy;
  ping?: Ping;
  subject: Subject[];
  contactSubject: Subject[];
  /** v2 */
  property: Property[];
}

export interface NodeList {
  node: Node[];
}

export interface Person {
  subject: Subject;
  givenName: string[];
  familyName: string;
  email: string[];
  isMemberOf: Subject[];
  equivalentIdentity: Subject[];
  verified?: boolean;
}

export interface Group {
  subject: Subject;
  groupName: string;
  hasMember: Subject[];
  rightsHolder: Subject[];
}

export interface SubjectInfo {
  person: Person[];
  group: Group[];
}

export interface SubjectList {
  subject: Subject[];
}

export interface Session {
  subject: Subject;
  subjectInfo?: SubjectInfo;
}

export interface QueryField {
  name: string;
  description: string[];
  type: string;
  searchable: boolean;
  returnable: boolean;
  sortable: boolean;
  multivalued?: boolean;
}

export interface QueryEngineDescription {
  queryEngineVersion: string;
  querySchemaVersion?: string;
  name: string;
  additionalInfo: string[];
  queryField: QueryField[];
}

export interface QueryEngineList {
  queryEngine: string[];
}

/** v2 OptionList, e.g. the themes of MNView.listViews. */
export interface OptionList {
  key: string;
  description: string;
  option: string[];
}
