/** Sample values of every DataONE type: minimal (required parts only) and maximal (everything set). */
import type * as M from '../src/models.js';

export const d = (iso: string): Date => new Date(iso);

/** Identifiers that break naive encoders: XML specials, unicode, URL escapes. */
export const TRICKY_IDS = [
  'doi:10.5063/F1&2<3>4',
  'urn:uuid:café-δ-中文-𝔘',
  'ark:/13030/m5%2Fabc',
  'id?query=1#frag',
  `quote"apos'`,
  '0012',
];

export const checksumMin: M.Checksum = { algorithm: 'MD5', value: 'd41d8cd98f00b204e9800998ecf8427e' };
export const checksumMax: M.Checksum = { algorithm: 'SHA-256', value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' };

export const accessPolicyOne: M.AccessPolicy = { allow: [{ subject: ['public'], permission: ['read'] }] };
export const accessPolicyMany: M.AccessPolicy = {
  allow: [
    { subject: ['public'], permission: ['read'] },
    { subject: ['CN=Jane Doe,O=Example,C=US,DC=cilogon,DC=org', 'http://orcid.org/0000-0002-1825-0097'], permission: ['read', 'write', 'changePermission'] },
  ],
};

export const replicationPolicyMin: M.ReplicationPolicy = { preferredMemberNode: [], blockedMemberNode: [] };
export const replicationPolicyOne: M.ReplicationPolicy = {
  replicationAllowed: false,
  numberReplicas: 0,
  preferredMemberNode: ['urn:node:KNB'],
  blockedMemberNode: ['urn:node:BAD'],
};
export const replicationPolicyMax: M.ReplicationPolicy = {
  replicationAllowed: true,
  numberReplicas: 3,
  preferredMemberNode: ['urn:node:KNB', 'urn:node:ARCTIC'],
  blockedMemberNode: ['urn:node:BAD', 'urn:node:WORSE'],
};

export const replica: M.Replica = { replicaMemberNode: 'urn:node:KNB', replicationStatus: 'completed', replicaVerified: d('2024-01-02T03:04:05.678Z') };

export const sysmetaMin: M.SystemMetadata = {
  identifier: 'x',
  formatId: 'text/csv',
  size: 0,
  checksum: checksumMin,
  rightsHolder: 'public',
  replica: [],
};

export const sysmetaMax: M.SystemMetadata = {
  serialVersion: 7,
  identifier: 'doi:10.5063/F1&<é%2F?#',
  formatId: 'eml://ecoinformatics.org/eml-2.1.1',
  size: 9007199254740991,
  checksum: checksumMax,
  submitter: 'CN=Jane Doe,O=Example,C=US,DC=cilogon,DC=org',
  rightsHolder: 'http://orcid.org/0000-0002-1825-0097',
  accessPolicy: accessPolicyMany,
  replicationPolicy: replicationPolicyMax,
  obsoletes: 'doi:10.5063/F1.v1',
  obsoletedBy: 'doi:10.5063/F1.v3',
  archived: true,
  dateUploaded: d('2020-02-29T23:59:59.999Z'),
  dateSysMetadataModified: d('2026-11-22T01:49:30.278Z'),
  originMemberNode: 'urn:node:TEST',
  authoritativeMemberNode: 'urn:node:TEST',
  replica: [replica, { replicaMemberNode: 'urn:node:CN', replicationStatus: 'queued', replicaVerified: d('1999-12-31T00:00:00.000Z') }],
  seriesId: 'urn:series:abc',
  mediaType: { name: 'text/xml', property: [{ name: 'charset', value: 'utf-8' }, { name: 'note', value: 'a&b' }] },
  fileName: 'data file (1).xml',
};

/** Every optional element present once, every repeated element once. */
export const sysmetaOneEach: M.SystemMetadata = {
  ...sysmetaMax,
  accessPolicy: accessPolicyOne,
  replicationPolicy: replicationPolicyOne,
  replica: [replica],
  archived: false,
  mediaType: { name: 'text/csv', property: [{ name: 'header', value: 'present' }] },
};

export const objectInfo = (i: number): M.ObjectInfo => ({
  identifier: `obj-${i}&<`,
  formatId: 'text/csv',
  checksum: { algorithm: 'SHA-1', value: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' },
  dateSysMetadataModified: d(`2024-05-0${(i % 9) + 1}T10:00:00.123Z`),
  size: 1000 + i,
});
export const objectListEmpty: M.ObjectList = { count: 0, start: 0, total: 0, objectInfo: [] };
export const objectListOne: M.ObjectList = { count: 1, start: 5, total: 6, objectInfo: [objectInfo(1)] };
export const objectListMany: M.ObjectList = { count: 3, start: 0, total: 100, objectInfo: [objectInfo(1), objectInfo(2), objectInfo(3)] };

export const logEntry = (i: number, event: string): M.LogEntry => ({
  entryId: String(i),
  identifier: `pid-${i}`,
  ipAddress: '192.0.2.1',
  userAgent: 'DataONE-Python/3.5 +http://dataone.org/',
  subject: 'public',
  event,
  dateLogged: d('2024-05-01T10:00:00.001Z'),
  nodeIdentifier: 'urn:node:TEST',
});
export const logEmpty: M.Log = { count: 0, start: 0, total: 0, logEntry: [] };
export const logV1: M.Log = { count: 2, start: 0, total: 2, logEntry: [logEntry(1, 'read'), { ...logEntry(2, 'synchronization_failed'), userAgent: '', ipAddress: '' }] };
export const logV2: M.Log = { count: 3, start: 10, total: 13, logEntry: [logEntry(1, 'read'), logEntry(2, 'archive'), logEntry(3, 'updateSystemMetadata')] };

export const algorithmsOne: M.ChecksumAlgorithmList = { algorithm: ['MD5'] };
export const algorithmsMany: M.ChecksumAlgorithmList = { algorithm: ['SHA-1', 'MD5', 'SHA-256'] };

export const formatMin: M.ObjectFormat = { formatId: 'text/csv', formatName: 'Comma Separated Values Text', formatType: 'DATA' };
export const formatMax: M.ObjectFormat = {
  formatId: 'eml://ecoinformatics.org/eml-2.1.1',
  formatName: 'Ecological Metadata Language, version 2.1.1',
  formatType: 'METADATA',
  mediaType: { name: 'text/xml', property: [{ name: 'charset', value: 'utf-8' }] },
  extension: 'xml',
};
export const formatListOne: M.ObjectFormatList = { count: 1, start: 0, total: 1, objectFormat: [formatMin] };
export const formatListMany: M.ObjectFormatList = { count: 2, start: 0, total: 2, objectFormat: [formatMax, { ...formatMin, mediaType: { name: 'text/csv', property: [] } }] };

export const locationListEmpty: M.ObjectLocationList = { identifier: 'pid&1', objectLocation: [] };
export const locationListMany: M.ObjectLocationList = {
  identifier: 'pid&1',
  objectLocation: [
    { nodeIdentifier: 'urn:node:A', baseURL: 'https://a.example.org/mn', version: ['v1'], url: 'https://a.example.org/mn/v1/object/pid%261' },
    { nodeIdentifier: 'urn:node:B', baseURL: 'https://b.example.org/mn', version: ['v1', 'v2'], url: 'https://b.example.org/mn/v2/object/pid%261', preference: 2 },
  ],
};

export const schedule: M.Schedule = { hour: '*', mday: '*', min: '0/3', mon: '*', sec: '0', wday: '?', year: '*' };

export const nodeMin: M.Node = {
  replicate: false,
  synchronize: false,
  type: 'mn',
  state: 'up',
  identifier: 'urn:node:TEST',
  name: 'Test',
  description: 'A test node',
  baseURL: 'https://mn.example.org/mn',
  subject: [],
  contactSubject: ['CN=Admin,DC=dataone,DC=org'],
  property: [],
};

export const nodeMax: M.Node = {
  replicate: true,
  synchronize: true,
  type: 'mn',
  state: 'down',
  identifier: 'urn:node:TEST',
  name: 'Test & Co <node>',
  description: 'Multi-line\ndescription with ünïcödé',
  baseURL: 'https://mn.example.org/mn',
  services: {
    service: [
      { name: 'MNCore', version: 'v1', available: true, restriction: [] },
      {
        name: 'MNStorage',
        version: 'v2',
        available: false,
        restriction: [
          { methodName: 'create', subject: ['CN=a', 'CN=b'] },
          { methodName: 'update', subject: [] },
        ],
      },
      { name: 'MNRead', version: 'v2', restriction: [{ methodName: 'get', subject: ['public'] }] },
    ],
  },
  synchronization: { schedule, lastHarvested: d('2024-01-01T00:00:00.000Z'), lastCompleteHarvest: d('2024-01-02T00:00:00.500Z') },
  nodeReplicationPolicy: { maxObjectSize: 1073741824, spaceAllocated: 10995116277760, allowedNode: ['urn:node:A', 'urn:node:B'], allowedObjectFormat: ['text/csv', 'eml://ecoinformatics.org/eml-2.1.1'] },
  ping: { success: true, lastSuccess: d('2024-03-03T03:03:03.333Z') },
  subject: ['CN=urn:node:TEST,DC=dataone,DC=org', 'CN=other'],
  contactSubject: ['CN=Admin,DC=dataone,DC=org', 'http://orcid.org/0000-0002-1825-0097'],
  property: [
    { key: 'CN_node_name', value: 'Test' },
    { key: 'CN_logo_url', type: 'url', value: 'https://example.org/logo.png?a=1&b=2' },
  ],
};

/** Optional parts present, repeated parts with exactly one item. */
export const nodeOneEach: M.Node = {
  ...nodeMax,
  services: { service: [{ name: 'MNCore', version: 'v2', available: true, restriction: [{ methodName: 'ping', subject: ['CN=x'] }] }] },
  synchronization: { schedule },
  nodeReplicationPolicy: { allowedNode: ['urn:node:A'], allowedObjectFormat: ['text/csv'] },
  ping: {},
  subject: ['CN=urn:node:TEST,DC=dataone,DC=org'],
  contactSubject: ['CN=Admin,DC=dataone,DC=org'],
  property: [{ key: 'k', value: '' }],
};

export const nodeListOne: M.NodeList = { node: [nodeMin] };
export const nodeListMany: M.NodeList = { node: [nodeMax, { ...nodeMin, type: 'cn', identifier: 'urn:node:CN', state: 'unknown' }, nodeOneEach] };

export const personMin: M.Person = { subject: 'CN=p', givenName: ['Jane'], familyName: 'Doe', email: [], isMemberOf: [], equivalentIdentity: [] };
export const personMax: M.Person = {
  subject: 'CN=Jane Doe,O=Example',
  givenName: ['Jane', 'Q.'],
  familyName: "O'Doe & Søn",
  email: ['jane@example.org', 'jd@example.com'],
  isMemberOf: ['CN=g1', 'CN=g2'],
  equivalentIdentity: ['http://orcid.org/0000-0002-1825-0097', 'CN=alt'],
  verified: true,
};
export const personOne: M.Person = { ...personMax, givenName: ['Jane'], email: ['jane@example.org'], isMemberOf: ['CN=g1'], equivalentIdentity: ['CN=alt'], verified: false };

export const groupMin: M.Group = { subject: 'CN=g1', groupName: 'Group 1', hasMember: [], rightsHolder: ['CN=p'] };
export const groupMax: M.Group = { subject: 'CN=g2', groupName: 'Group <2>', hasMember: ['CN=a', 'CN=b'], rightsHolder: ['CN=p', 'CN=q'] };

export const subjectInfoEmpty: M.SubjectInfo = { person: [], group: [] };
export const subjectInfoOne: M.SubjectInfo = { person: [personMin], group: [groupMin] };
export const subjectInfoMany: M.SubjectInfo = { person: [personMax, personOne, personMin], group: [groupMax, groupMin] };

export const subjectListEmpty: M.SubjectList = { subject: [] };
export const subjectListOne: M.SubjectList = { subject: ['public'] };
export const subjectListMany: M.SubjectList = { subject: ['public', 'authenticatedUser', 'CN=a&b'] };

export const sessionMin: M.Session = { subject: 'public' };
export const sessionMax: M.Session = { subject: 'CN=Jane Doe,O=Example', subjectInfo: subjectInfoMany };

export const queryEngineDescriptionMin: M.QueryEngineDescription = { queryEngineVersion: '8.11', name: 'solr', additionalInfo: [], queryField: [] };
export const queryEngineDescriptionMax: M.QueryEngineDescription = {
  queryEngineVersion: '8.11.2',
  querySchemaVersion: '1.2',
  name: 'solr',
  additionalInfo: ['https://wiki.example.org/solr', 'second'],
  queryField: [
    { name: 'id', description: ['The identifier', 'PID'], type: 'string', searchable: true, returnable: true, sortable: true, multivalued: false },
    { name: 'keywords', description: [], type: 'text_general', searchable: true, returnable: false, sortable: false },
    { name: 'title', description: ['Title'], type: 'text', searchable: false, returnable: true, sortable: false, multivalued: true },
  ],
};
export const queryEngineListEmpty: M.QueryEngineList = { queryEngine: [] };
export const queryEngineListMany: M.QueryEngineList = { queryEngine: ['solr', 'pathQuery'] };
export const queryEngineListOne: M.QueryEngineList = { queryEngine: ['solr'] };

export const optionListEmpty: M.OptionList = { key: 'views', description: 'Views', option: [] };
export const optionListOne: M.OptionList = { key: 'views', description: 'Views & themes', option: ['default'] };
export const optionListMany: M.OptionList = { key: 'views', description: 'Views', option: ['default', 'metacatui', 'plain'] };
