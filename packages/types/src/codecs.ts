import { DecodeError } from './decode-error.js';
import { identifierProblem } from './identifier.js';
import type * as M from './models.js';
import { PERMISSIONS, REPLICATION_STATUSES, EVENTS_V1 } from './models.js';
import { DATAONE_NAMESPACES, TYPES_NS_V1, TYPES_NS_V1_1, TYPES_NS_V2, type ApiVersion } from './namespaces.js';
import * as S from './xml/descriptors.js';
import { parseXml, type ParseOptions } from './xml/safe-parse.js';
import { decodeNode, encodeDocument, encodeDocumentParts, type TypeSpec } from './xml/schema.js';

/**
 * Encode/decode one DataONE type. `encode` writes a schema-valid document for the API
 * version (namespace and v2-only fields follow it); `decode` accepts any prefix, a default
 * namespace or either version's namespace, and throws DecodeError naming the bad field.
 */
export interface Codec<T> {
  readonly rootName: string;
  namespace(version: ApiVersion): string;
  encode(value: T, version?: ApiVersion): string;
  /**
   * The same document as consecutive parts (one when short): a long listing written part by
   * part is never built as one string.
   */
  encodeParts(value: T, version?: ApiVersion): string[];
  decode(xml: string | Uint8Array, options?: ParseOptions): T;
}

interface CodecDefinition<T> {
  spec: TypeSpec;
  rootName: string;
  /** Namespace per API version: types defined in v1 keep the v1 namespace on /v2 too. */
  ns: Record<ApiVersion, string>;
  /** Checks the schema makes that the descriptor cannot (enumerations, identifier syntax). */
  check?: (value: T, field: string) => void;
  /** Model fixes applied after decoding (e.g. defaults for arrays). */
  fromModel?: (raw: Record<string, unknown>) => T;
}

function defineCodec<T extends object>(def: CodecDefinition<T>): Codec<T> {
  return {
    rootName: def.rootName,
    namespace: (version) => def.ns[version],
    encode(value, version = 'v2') {
      return encodeDocument(def.spec, def.rootName, def.ns[version], value, version);
    },
    encodeParts(value, version = 'v2') {
      return encodeDocumentParts(def.spec, def.rootName, def.ns[version], value, version);
    },
    decode(xml, options) {
      const doc = parseXml(xml, options);
      if (doc.rootName !== def.rootName) {
        throw new DecodeError(`expected root element <${def.rootName}>, found <${doc.rootName}>`);
      }
      if (doc.rootNamespace !== '' && !DATAONE_NAMESPACES.includes(doc.rootNamespace)) {
        throw new DecodeError(`root element is in namespace '${doc.rootNamespace}', not a DataONE types namespace`, def.rootName);
      }
      const raw = decodeNode(def.spec, doc.root, def.rootName);
      const value = def.fromModel ? def.fromModel(raw) : (raw as T);
      def.check?.(value, def.rootName);
      return value;
    },
  };
}

const both = (ns: string): Record<ApiVersion, string> => ({ v1: ns, v2: ns });
const byVersion: Record<ApiVersion, string> = { v1: TYPES_NS_V1, v2: TYPES_NS_V2 };

function checkId(id: string | undefined, field: string): void {
  if (id === undefined) return;
  const problem = identifierProblem(id);
  if (problem) throw new DecodeError(problem, field);
}

function checkEnum(value: string, allowed: readonly string[], field: string): void {
  if (!allowed.includes(value)) throw new DecodeError(`'${value}' is not one of ${allowed.join(', ')}`, field);
}

function checkSystemMetadata(sm: M.SystemMetadata, f: string): void {
  checkId(sm.identifier, `${f}/identifier`);
  checkId(sm.obsoletes, `${f}/obsoletes`);
  checkId(sm.obsoletedBy, `${f}/obsoletedBy`);
  checkId(sm.seriesId, `${f}/seriesId`);
  if (sm.size < 0) throw new DecodeError('size must not be negative', `${f}/size`);
  if (sm.serialVersion !== undefined && sm.serialVersion < 0) throw new DecodeError('serialVersion must not be negative', `${f}/serialVersion`);
  if (sm.formatId.trim() === '') throw new DecodeError('must not be empty', `${f}/formatId`);
  if (sm.rightsHolder.trim() === '') throw new DecodeError('must not be empty', `${f}/rightsHolder`);
  for (const rule of sm.accessPolicy?.allow ?? []) {
    for (const p of rule.permission) checkEnum(p, PERMISSIONS, `${f}/accessPolicy/allow/permission`);
    for (const s of rule.subject) if (s.trim() === '') throw new DecodeError('must not be empty', `${f}/accessPolicy/allow/subject`);
  }
  for (const r of sm.replica) checkEnum(r.replicationStatus, REPLICATION_STATUSES, `${f}/replica/replicationStatus`);
}

export const SystemMetadataCodec = defineCodec<M.SystemMetadata>({
  spec: S.SystemMetadataSpec,
  rootName: 'systemMetadata',
  ns: byVersion,
  check: checkSystemMetadata,
});

export const ObjectListCodec = defineCodec<M.ObjectList>({ spec: S.ObjectListSpec, rootName: 'objectList', ns: both(TYPES_NS_V1) });

export const LogCodec = defineCodec<M.Log>({
  spec: S.LogSpec,
  rootName: 'log',
  ns: byVersion,
});

/** v1 Log: events must be members of the v1 Event enumeration. */
export function encodeLog(log: M.Log, version: ApiVersion): string {
  return encodeLogParts(log, version).join('');
}

/** `encodeLog` as parts (Codec.encodeParts). */
export function encodeLogParts(log: M.Log, version: ApiVersion): string[] {
  if (version === 'v1') for (const e of log.logEntry) checkEnumForEncode(e.event, EVENTS_V1, 'log/logEntry/event');
  return LogCodec.encodeParts(log, version);
}

function checkEnumForEncode(value: string, allowed: readonly string[], field: string): void {
  if (!allowed.includes(value)) throw new TypeError(`${field}: '${value}' is not valid in v1`);
}

export const ChecksumCodec = defineCodec<M.Checksum>({ spec: S.ChecksumSpec, rootName: 'checksum', ns: both(TYPES_NS_V1) });

export const ChecksumAlgorithmListCodec = defineCodec<M.ChecksumAlgorithmList>({
  spec: S.ChecksumAlgorithmListSpec,
  rootName: 'checksumAlgorithmList',
  ns: both(TYPES_NS_V1),
});

export const ObjectFormatCodec = defineCodec<M.ObjectFormat>({ spec: S.ObjectFormatSpec, rootName: 'objectFormat', ns: byVersion });
export const ObjectFormatListCodec = defineCodec<M.ObjectFormatList>({
  spec: S.ObjectFormatListSpec,
  rootName: 'objectFormatList',
  ns: byVersion,
});

export const ObjectLocationListCodec = defineCodec<M.ObjectLocationList>({
  spec: S.ObjectLocationListSpec,
  rootName: 'objectLocationList',
  ns: both(TYPES_NS_V1),
  check: (v, f) => checkId(v.identifier, `${f}/identifier`),
});

export const NodeCodec = defineCodec<M.Node>({
  spec: S.NodeSpec,
  rootName: 'node',
  ns: byVersion,
  fromModel: (raw) => ({ property: [], ...raw }) as unknown as M.Node,
  check: (n, f) => {
    checkEnum(n.type, ['mn', 'cn', 'Monitor'], `${f}/@type`);
    checkEnum(n.state, ['up', 'down', 'unknown'], `${f}/@state`);
  },
});

export const NodeListCodec = defineCodec<M.NodeList>({
  spec: S.NodeListSpec,
  rootName: 'nodeList',
  ns: byVersion,
  fromModel: (raw) => ({ node: (raw.node as M.Node[]).map((n) => ({ ...n, property: n.property ?? [] })) }),
});

export const SubjectInfoCodec = defineCodec<M.SubjectInfo>({ spec: S.SubjectInfoSpec, rootName: 'subjectInfo', ns: both(TYPES_NS_V1) });
export const SubjectListCodec = defineCodec<M.SubjectList>({ spec: S.SubjectListSpec, rootName: 'subjectList', ns: both(TYPES_NS_V1) });
export const PersonCodec = defineCodec<M.Person>({ spec: S.PersonSpec, rootName: 'person', ns: both(TYPES_NS_V1) });
export const GroupCodec = defineCodec<M.Group>({ spec: S.GroupSpec, rootName: 'group', ns: both(TYPES_NS_V1) });
export const SessionCodec = defineCodec<M.Session>({ spec: S.SessionSpec, rootName: 'session', ns: both(TYPES_NS_V1) });
export const ReplicaCodec = defineCodec<M.Replica>({
  spec: S.ReplicaSpec,
  rootName: 'replica',
  ns: both(TYPES_NS_V1),
  check: (r, f) => checkEnum(r.replicationStatus, REPLICATION_STATUSES, `${f}/replicationStatus`),
});
export const AccessPolicyCodec = defineCodec<M.AccessPolicy>({
  spec: S.AccessPolicySpec,
  rootName: 'accessPolicy',
  ns: both(TYPES_NS_V1),
  check: (p, f) => p.allow.forEach((r) => r.permission.forEach((x) => checkEnum(x, PERMISSIONS, `${f}/allow/permission`))),
});
export const ReplicationPolicyCodec = defineCodec<M.ReplicationPolicy>({
  spec: S.ReplicationPolicySpec,
  rootName: 'replicationPolicy',
  ns: both(TYPES_NS_V1),
});

export const QueryEngineDescriptionCodec = defineCodec<M.QueryEngineDescription>({
  spec: S.QueryEngineDescriptionSpec,
  rootName: 'queryEngineDescription',
  ns: both(TYPES_NS_V1_1),
});
export const QueryEngineListCodec = defineCodec<M.QueryEngineList>({
  spec: S.QueryEngineListSpec,
  rootName: 'queryEngineList',
  ns: both(TYPES_NS_V1_1),
});
export const OptionListCodec = defineCodec<M.OptionList>({ spec: S.OptionListSpec, rootName: 'optionList', ns: both(TYPES_NS_V2) });

const IdentifierDocCodec = defineCodec<{ value: string }>({
  spec: S.IdentifierSpec,
  rootName: 'identifier',
  ns: both(TYPES_NS_V1),
  check: (v, f) => checkId(v.value, f),
});

/**
 * Identifier answers (create, update, delete, archive, generateIdentifier):
 * `<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">PID</d1:identifier>`,
 * no whitespace around the PID, on both API versions.
 */
export const IdentifierCodec: Codec<string> = {
  rootName: 'identifier',
  namespace: () => TYPES_NS_V1,
  encode: (id, version) => IdentifierDocCodec.encode({ value: id }, version),
  encodeParts: (id, version) => IdentifierDocCodec.encodeParts({ value: id }, version),
  decode: (xml, options) => IdentifierDocCodec.decode(xml, options).value,
};

const NodeReferenceDocCodec = defineCodec<{ value: string }>({ spec: S.IdentifierSpec, rootName: 'nodeReference', ns: both(TYPES_NS_V1) });

/**
 * A NodeReference answer (CNRegister.register):
 * `<d1:nodeReference xmlns:d1="http://ns.dataone.org/service/types/v1">urn:node:X</d1:nodeReference>`.
 */
export const NodeReferenceCodec: Codec<string> = {
  rootName: 'nodeReference',
  namespace: () => TYPES_NS_V1,
  encode: (id, version) => NodeReferenceDocCodec.encode({ value: id }, version),
  encodeParts: (id, version) => NodeReferenceDocCodec.encodeParts({ value: id }, version),
  decode: (xml, options) => NodeReferenceDocCodec.decode(xml, options).value,
};
