import type { TypeSpec } from './schema.js';

// One description per XSD complex type, children in the schema's sequence order.
// Sources: dataoneTypes.xsd (v1), dataoneTypes_v1.1.xsd, dataoneTypes_v2.0.xsd.

export const ChecksumSpec: TypeSpec = {
  name: 'Checksum',
  attrs: [{ name: 'algorithm', scalar: 'string', required: true }],
  text: { key: 'value', scalar: 'string', required: true },
};

export const AccessRuleSpec: TypeSpec = {
  name: 'AccessRule',
  children: [
    { name: 'subject', type: 'string', min: 1, max: 'n' },
    { name: 'permission', type: 'string', min: 1, max: 'n' },
  ],
};

export const AccessPolicySpec: TypeSpec = {
  name: 'AccessPolicy',
  children: [{ name: 'allow', type: AccessRuleSpec, min: 1, max: 'n' }],
};

export const ReplicationPolicySpec: TypeSpec = {
  name: 'ReplicationPolicy',
  attrs: [
    { name: 'replicationAllowed', scalar: 'boolean' },
    { name: 'numberReplicas', scalar: 'int' },
  ],
  children: [
    { name: 'preferredMemberNode', type: 'string', min: 0, max: 'n' },
    { name: 'blockedMemberNode', type: 'string', min: 0, max: 'n' },
  ],
};

export const ReplicaSpec: TypeSpec = {
  name: 'Replica',
  children: [
    { name: 'replicaMemberNode', type: 'string', min: 1, max: 1 },
    { name: 'replicationStatus', type: 'string', min: 1, max: 1 },
    { name: 'replicaVerified', type: 'datetime', min: 1, max: 1 },
  ],
};

export const MediaTypeSpec: TypeSpec = {
  name: 'MediaType',
  attrs: [{ name: 'name', scalar: 'string', required: true }],
  children: [
    {
      name: 'property',
      type: { name: 'MediaTypeProperty', attrs: [{ name: 'name', scalar: 'string', required: true }], text: { key: 'value', scalar: 'string' } },
      min: 0,
      max: 'n',
    },
  ],
};

export const SystemMetadataSpec: TypeSpec = {
  name: 'SystemMetadata',
  children: [
    { name: 'serialVersion', type: 'int', min: 0, max: 1 },
    { name: 'identifier', type: 'string', min: 1, max: 1 },
    { name: 'formatId', type: 'string', min: 1, max: 1 },
    { name: 'size', type: 'int', min: 1, max: 1 },
    { name: 'checksum', type: ChecksumSpec, min: 1, max: 1 },
    { name: 'submitter', type: 'string', min: 0, max: 1 },
    { name: 'rightsHolder', type: 'string', min: 1, max: 1 },
    { name: 'accessPolicy', type: AccessPolicySpec, min: 0, max: 1 },
    { name: 'replicationPolicy', type: ReplicationPolicySpec, min: 0, max: 1 },
    { name: 'obsoletes', type: 'string', min: 0, max: 1 },
    { name: 'obsoletedBy', type: 'string', min: 0, max: 1 },
    { name: 'archived', type: 'boolean', min: 0, max: 1 },
    { name: 'dateUploaded', type: 'datetime', min: 0, max: 1 },
    { name: 'dateSysMetadataModified', type: 'datetime', min: 0, max: 1 },
    { name: 'originMemberNode', type: 'string', min: 0, max: 1 },
    { name: 'authoritativeMemberNode', type: 'string', min: 0, max: 1 },
    { name: 'replica', type: ReplicaSpec, min: 0, max: 'n' },
    { name: 'seriesId', type: 'string', min: 0, max: 1, v2: true },
    { name: 'mediaType', type: MediaTypeSpec, min: 0, max: 1, v2: true },
    { name: 'fileName', type: 'string', min: 0, max: 1, empty: true, v2: true },
  ],
};

const sliceAttrs = [
  { name: 'count', scalar: 'int', required: true },
  { name: 'start', scalar: 'int', required: true },
  { name: 'total', scalar: 'int', required: true },
] as const satisfies TypeSpec['attrs'];

export const ObjectInfoSpec: TypeSpec = {
  name: 'ObjectInfo',
  children: [
    { name: 'identifier', type: 'string', min: 1, max: 1 },
    { name: 'formatId', type: 'string', min: 1, max: 1 },
    { name: 'checksum', type: ChecksumSpec, min: 1, max: 1 },
    { name: 'dateSysMetadataModified', type: 'datetime', min: 1, max: 1 },
    { name: 'size', type: 'int', min: 1, max: 1 },
  ],
};

export const ObjectListSpec: TypeSpec = {
  name: 'ObjectList',
  attrs: [...sliceAttrs],
  children: [{ name: 'objectInfo', type: ObjectInfoSpec, min: 0, max: 'n' }],
};

export const LogEntrySpec: TypeSpec = {
  name: 'LogEntry',
  children: [
    { name: 'entryId', type: 'string', min: 1, max: 1 },
    { name: 'identifier', type: 'string', min: 1, max: 1 },
    { name: 'ipAddress', type: 'string', min: 1, max: 1, empty: true },
    { name: 'userAgent', type: 'string', min: 1, max: 1, empty: true },
    { name: 'subject', type: 'string', min: 1, max: 1 },
    { name: 'event', type: 'string', min: 1, max: 1 },
    { name: 'dateLogged', type: 'datetime', min: 1, max: 1 },
    { name: 'nodeIdentifier', type: 'string', min: 1, max: 1 },
  ],
};

export const LogSpec: TypeSpec = {
  name: 'Log',
  attrs: [...sliceAttrs],
  children: [{ name: 'logEntry', type: LogEntrySpec, min: 0, max: 'n' }],
};

export const ChecksumAlgorithmListSpec: TypeSpec = {
  name: 'ChecksumAlgorithmList',
  children: [{ name: 'algorithm', type: 'string', min: 1, max: 'n' }],
};

export const ObjectFormatSpec: TypeSpec = {
  name: 'ObjectFormat',
  children: [
    { name: 'formatId', type: 'string', min: 1, max: 1 },
    { name: 'formatName', type: 'string', min: 1, max: 1, empty: true },
    { name: 'formatType', type: 'string', min: 1, max: 1, empty: true },
    { name: 'mediaType', type: MediaTypeSpec, min: 0, max: 1, v2: true },
    { name: 'extension', type: 'string', min: 0, max: 1, empty: true, v2: true },
  ],
};

export const ObjectFormatListSpec: TypeSpec = {
  name: 'ObjectFormatList',
  attrs: [...sliceAttrs],
  children: [{ name: 'objectFormat', type: ObjectFormatSpec, min: 1, max: 'n' }],
};

export const ObjectLocationSpec: TypeSpec = {
  name: 'ObjectLocation',
  children: [
    { name: 'nodeIdentifier', type: 'string', min: 1, max: 1 },
    { name: 'baseURL', type: 'string', min: 1, max: 1 },
    { name: 'version', type: 'string', min: 1, max: 'n' },
    { name: 'url', type: 'string', min: 1, max: 1 },
    { name: 'preference', type: 'int', min: 0, max: 1 },
  ],
};

export const ObjectLocationListSpec: TypeSpec = {
  name: 'ObjectLocationList',
  children: [
    { name: 'identifier', type: 'string', min: 1, max: 1 },
    { name: 'objectLocation', type: ObjectLocationSpec, min: 0, max: 'n' },
  ],
};

export const SubjectListSpec: TypeSpec = {
  name: 'SubjectList',
  children: [{ name: 'subject', type: 'string', min: 0, max: 'n' }],
};

export const ServiceSpec: TypeSpec = {
  name: 'Service',
  attrs: [
    { name: 'name', scalar: 'string', required: true },
    { name: 'version', scalar: 'string', required: true },
    { name: 'available', scalar: 'boolean' },
  ],
  children: [
    {
      name: 'restriction',
      type: {
        name: 'ServiceMethodRestriction',
        attrs: [{ name: 'methodName', scalar: 'string', required: true }],
        children: [{ name: 'subject', type: 'string', min: 0, max: 'n' }],
      },
      min: 0,
      max: 'n',
    },
  ],
};

export const ScheduleSpec: TypeSpec = {
  name: 'Schedule',
  attrs: (['hour', 'mday', 'min', 'mon', 'sec', 'wday', 'year'] as const).map((name) => ({ name, scalar: 'string' as const, required: true })),
};

export const SynchronizationSpec: TypeSpec = {
  name: 'Synchronization',
  children: [
    { name: 'schedule', type: ScheduleSpec, min: 1, max: 1 },
    { name: 'lastHarvested', type: 'datetime', min: 0, max: 1 },
    { name: 'lastCompleteHarvest', type: 'datetime', min: 0, max: 1 },
  ],
};

export const NodeReplicationPolicySpec: TypeSpec = {
  name: 'NodeReplicationPolicy',
  children: [
    { name: 'maxObjectSize', type: 'int', min: 0, max: 1 },
    { name: 'spaceAllocated', type: 'int', min: 0, max: 1 },
    { name: 'allowedNode', type: 'string', min: 0, max: 'n' },
    { name: 'allowedObjectFormat', type: 'string', min: 0, max: 'n' },
  ],
};

export const PropertySpec: TypeSpec = {
  name: 'Property',
  attrs: [
    { name: 'key', scalar: 'string', required: true },
    { name: 'type', scalar: 'string' },
  ],
  text: { key: 'value', scalar: 'string' },
};

export const NodeSpec: TypeSpec = {
  name: 'Node',
  attrs: [
    { name: 'replicate', scalar: 'boolean', required: true },
    { name: 'synchronize', scalar: 'boolean', required: true },
    { name: 'type', scalar: 'string', required: true },
    { name: 'state', scalar: 'string', required: true },
  ],
  children: [
    { name: 'identifier', type: 'string', min: 1, max: 1 },
    { name: 'name', type: 'string', min: 1, max: 1 },
    { name: 'description', type: 'string', min: 1, max: 1 },
    { name: 'baseURL', type: 'string', min: 1, max: 1 },
    { name: 'services', type: { name: 'Services', children: [{ name: 'service', type: ServiceSpec, min: 1, max: 'n' }] }, min: 0, max: 1 },
    { name: 'synchronization', type: SynchronizationSpec, min: 0, max: 1 },
    { name: 'nodeReplicationPolicy', type: NodeReplicationPolicySpec, min: 0, max: 1 },
    {
      name: 'ping',
      type: { name: 'Ping', attrs: [{ name: 'success', scalar: 'boolean' }, { name: 'lastSuccess', scalar: 'datetime' }] },
      min: 0,
      max: 1,
    },
    { name: 'subject', type: 'string', min: 0, max: 'n' },
    { name: 'contactSubject', type: 'string', min: 1, max: 'n' },
    { name: 'property', type: PropertySpec, min: 0, max: 'n', v2: true },
  ],
};

export const NodeListSpec: TypeSpec = {
  name: 'NodeList',
  children: [{ name: 'node', type: NodeSpec, min: 1, max: 'n' }],
};

export const PersonSpec: TypeSpec = {
  name: 'Person',
  children: [
    { name: 'subject', type: 'string', min: 1, max: 1 },
    { name: 'givenName', type: 'string', min: 1, max: 'n' },
    { name: 'familyName', type: 'string', min: 1, max: 1 },
    { name: 'email', type: 'string', min: 0, max: 'n' },
    { name: 'isMemberOf', type: 'string', min: 0, max: 'n' },
    { name: 'equivalentIdentity', type: 'string', min: 0, max: 'n' },
    { name: 'verified', type: 'boolean', min: 0, max: 1 },
  ],
};

export const GroupSpec: TypeSpec = {
  name: 'Group',
  children: [
    { name: 'subject', type: 'string', min: 1, max: 1 },
    { name: 'groupName', type: 'string', min: 1, max: 1 },
    { name: 'hasMember', type: 'string', min: 0, max: 'n' },
    { name: 'rightsHolder', type: 'string', min: 1, max: 'n' },
  ],
};

export const SubjectInfoSpec: TypeSpec = {
  name: 'SubjectInfo',
  children: [
    { name: 'person', type: PersonSpec, min: 0, max: 'n' },
    { name: 'group', type: GroupSpec, min: 0, max: 'n' },
  ],
};

export const SessionSpec: TypeSpec = {
  name: 'Session',
  children: [
    { name: 'subject', type: 'string', min: 1, max: 1 },
    { name: 'subjectInfo', type: SubjectInfoSpec, min: 0, max: 1 },
  ],
};

export const QueryFieldSpec: TypeSpec = {
  name: 'QueryField',
  children: [
    { name: 'name', type: 'string', min: 1, max: 1 },
    { name: 'description', type: 'string', min: 0, max: 'n', empty: true },
    { name: 'type', type: 'string', min: 1, max: 1 },
    { name: 'searchable', type: 'boolean', min: 1, max: 1 },
    { name: 'returnable', type: 'boolean', min: 1, max: 1 },
    { name: 'sortable', type: 'boolean', min: 1, max: 1 },
    { name: 'multivalued', type: 'boolean', min: 0, max: 1 },
  ],
};

export const QueryEngineDescriptionSpec: TypeSpec = {
  name: 'QueryEngineDescription',
  children: [
    { name: 'queryEngineVersion', type: 'string', min: 1, max: 1, empty: true },
    { name: 'querySchemaVersion', type: 'string', min: 0, max: 1, empty: true },
    { name: 'name', type: 'string', min: 1, max: 1, empty: true },
    { name: 'additionalInfo', type: 'string', min: 0, max: 'n' },
    { name: 'queryField', type: QueryFieldSpec, min: 0, max: 'n' },
  ],
};

export const QueryEngineListSpec: TypeSpec = {
  name: 'QueryEngineList',
  children: [{ name: 'queryEngine', type: 'string', min: 0, max: 'n' }],
};

export const OptionListSpec: TypeSpec = {
  name: 'OptionList',
  attrs: [
    { name: 'key', scalar: 'string', required: true },
    { name: 'description', scalar: 'string', required: true },
  ],
  children: [{ name: 'option', type: 'string', min: 0, max: 'n' }],
};

export const IdentifierSpec: TypeSpec = { name: 'Identifier', text: { key: 'value', scalar: 'string', required: true } };
