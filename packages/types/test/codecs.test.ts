/**
 * Every codec: encode → XSD-validate (xmllint, one batched run) → decode → deep-equal,
 * on both API versions, with minimal and maximal samples.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as C from '../src/codecs.js';
import type * as M from '../src/models.js';
import { TYPES_NS_V1, TYPES_NS_V1_1, TYPES_NS_V2, type ApiVersion } from '../src/namespaces.js';
import { DecodeError } from '../src/decode-error.js';
import * as F from './fixtures.js';
import { validateMany, type XsdResult } from './xsd.js';

interface Case {
  label: string;
  codec: C.Codec<never>;
  value: unknown;
  version: ApiVersion;
  /** What decoding gives back (defaults to value). */
  expected?: unknown;
  /** Custom encoder (encodeLog). */
  encode?: (v: never, version: ApiVersion) => string;
}

function stripSysmetaV2(sm: M.SystemMetadata): M.SystemMetadata {
  const { seriesId: _s, mediaType: _m, fileName: _f, ...rest } = sm;
  return rest;
}
function stripFormatV2(f: M.ObjectFormat): M.ObjectFormat {
  const { mediaType: _m, extension: _e, ...rest } = f;
  return rest;
}
const stripNodeV2 = (n: M.Node): M.Node => ({ ...n, property: [] });

const cases: Case[] = [];
function add<T>(name: string, codec: C.Codec<T>, samples: Record<string, T>, v1Expected?: (v: T) => T, encode?: (v: T, version: ApiVersion) => string): void {
  for (const [sample, value] of Object.entries(samples)) {
    for (const version of ['v1', 'v2'] as const) {
      cases.push({
        label: `${name} ${sample} ${version}`,
        codec: codec as unknown as C.Codec<never>,
        value,
        version,
        expected: version === 'v1' && v1Expected ? v1Expected(value) : value,
        ...(encode ? { encode: encode as unknown as Case['encode'] } : {}),
      });
    }
  }
}

add('SystemMetadata', C.SystemMetadataCodec, { min: F.sysmetaMin, max: F.sysmetaMax, oneEach: F.sysmetaOneEach }, stripSysmetaV2);
add('ObjectList', C.ObjectListCodec, { empty: F.objectListEmpty, one: F.objectListOne, many: F.objectListMany });
add('Log', C.LogCodec, { empty: F.logEmpty, v1events: F.logV1 }, undefined, C.encodeLog);
cases.push({ label: 'Log v2events v2', codec: C.LogCodec as unknown as C.Codec<never>, value: F.logV2, version: 'v2' });
add('Checksum', C.ChecksumCodec, { min: F.checksumMin, max: F.checksumMax });
add('ChecksumAlgorithmList', C.ChecksumAlgorithmListCodec, { one: F.algorithmsOne, many: F.algorithmsMany });
add('ObjectFormat', C.ObjectFormatCodec, { min: F.formatMin, max: F.formatMax }, stripFormatV2);
add('ObjectFormatList', C.ObjectFormatListCodec, { one: F.formatListOne, many: F.formatListMany }, (l) => ({ ...l, objectFormat: l.objectFormat.map(stripFormatV2) }));
add('ObjectLocationList', C.ObjectLocationListCodec, { empty: F.locationListEmpty, many: F.locationListMany });
add('Node', C.NodeCodec, { min: F.nodeMin, max: F.nodeMax, oneEach: F.nodeOneEach }, stripNodeV2);
add('NodeList', C.NodeListCodec, { one: F.nodeListOne, many: F.nodeListMany }, (l) => ({ node: l.node.map(stripNodeV2) }));
add('SubjectInfo', C.SubjectInfoCodec, { empty: F.subjectInfoEmpty, one: F.subjectInfoOne, many: F.subjectInfoMany });
add('SubjectList', C.SubjectListCodec, { empty: F.subjectListEmpty, one: F.subjectListOne, many: F.subjectListMany });
add('Person', C.PersonCodec, { min: F.personMin, one: F.personOne, max: F.personMax });
add('Group', C.GroupCodec, { min: F.groupMin, max: F.groupMax });
add('Session', C.SessionCodec, { min: F.sessionMin, max: F.sessionMax, oneEach: { subject: 'CN=x', subjectInfo: F.subjectInfoOne } });
add('Replica', C.ReplicaCodec, { one: F.replica });
add('AccessPolicy', C.AccessPolicyCodec, { one: F.accessPolicyOne, many: F.accessPolicyMany });
add('ReplicationPolicy', C.ReplicationPolicyCodec, { min: F.replicationPolicyMin, one: F.replicationPolicyOne, max: F.replicationPolicyMax });
add('QueryEngineDescription', C.QueryEngineDescriptionCodec, { min: F.queryEngineDescriptionMin, max: F.queryEngineDescriptionMax });
add('QueryEngineList', C.QueryEngineListCodec, { empty: F.queryEngineListEmpty, one: F.queryEngineListOne, many: F.queryEngineListMany });
add('OptionList', C.OptionListCodec, { empty: F.optionListEmpty, one: F.optionListOne, many: F.optionListMany });
add('Identifier', C.IdentifierCodec, Object.fromEntries(F.TRICKY_IDS.map((id, i) => [`tricky${i}`, id])));
add('SystemMetadata', C.SystemMetadataCodec, Object.fromEntries(F.TRICKY_IDS.map((id, i) => [`id${i}`, { ...F.sysmetaMin, identifier: id, seriesId: `sid-${id}` }])), stripSysmetaV2);

const encoded: (string | Error)[] = [];
let xsd: XsdResult[] = [];

beforeAll(() => {
  for (const c of cases) {
    try {
      encoded.push(c.encode ? c.encode(c.value as never, c.version) : c.codec.encode(c.value as never, c.version));
    } catch (e) {
      encoded.push(e as Error);
    }
  }
  const docs = encoded.map((e) => (typeof e === 'string' ? e : '<unencodable/>'));
  xsd = validateMany(docs);
});

describe('round trip of every codec: encode → XSD → decode', () => {
  it.each(cases.map((c, i) => [c.label, i] as const))('%s', (_label, i) => {
    const c = cases[i]!;
    const xml = encoded[i]!;
    if (xml instanceof Error) throw xml;
    expect(xsd[i]!.errors, xml).toEqual([]);
    expect(xsd[i]!.valid).toBe(true);
    const decoded = c.codec.decode(xml);
    expect(decoded).toStrictEqual(c.expected ?? c.value);
  });
});

describe('namespaces and document shape', () => {
  it.each([
    ['systemMetadata', C.SystemMetadataCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['node', C.NodeCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['nodeList', C.NodeListCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['log', C.LogCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['objectFormat', C.ObjectFormatCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['objectFormatList', C.ObjectFormatListCodec, TYPES_NS_V1, TYPES_NS_V2],
    ['objectList', C.ObjectListCodec, TYPES_NS_V1, TYPES_NS_V1],
    ['checksum', C.ChecksumCodec, TYPES_NS_V1, TYPES_NS_V1],
    ['checksumAlgorithmList', C.ChecksumAlgorithmListCodec, TYPES_NS_V1, TYPES_NS_V1],
    ['identifier', C.IdentifierCodec, TYPES_NS_V1, TYPES_NS_V1],
    ['queryEngineDescription', C.QueryEngineDescriptionCodec, TYPES_NS_V1_1, TYPES_NS_V1_1],
    ['optionList', C.OptionListCodec, TYPES_NS_V2, TYPES_NS_V2],
  ] as const)('%s uses the namespace that defines it', (root, codec, v1, v2) => {
    expect(codec.rootName).toBe(root);
    expect(codec.namespace('v1')).toBe(v1);
    expect(codec.namespace('v2')).toBe(v2);
  });

  it('writes a prefixed root with unqualified children and an XML declaration', () => {
    const xml = C.SystemMetadataCodec.encode(F.sysmetaMin, 'v2');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?><d1:systemMetadata xmlns:d1="http://ns.dataone.org/service/types/v2.0">')).toBe(true);
    expect(xml).toContain('<identifier>x</identifier>');
    expect(xml).not.toMatch(/xmlns="/);
  });

  it('defaults to v2 when no version is given', () => {
    expect(C.SystemMetadataCodec.encode(F.sysmetaMax)).toBe(C.SystemMetadataCodec.encode(F.sysmetaMax, 'v2'));
  });

  it('identifier answers carry no whitespace around the PID', () => {
    expect(C.IdentifierCodec.encode('a&b', 'v2')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">a&amp;b</d1:identifier>',
    );
  });

  it('v1 encoding leaves out every v2-only element', () => {
    const sm = C.SystemMetadataCodec.encode(F.sysmetaMax, 'v1');
    for (const el of ['seriesId', 'mediaType', 'fileName']) expect(sm).not.toContain(`<${el}`);
    expect(C.NodeCodec.encode(F.nodeMax, 'v1')).not.toContain('<property');
    const f = C.ObjectFormatCodec.encode(F.formatMax, 'v1');
    expect(f).not.toContain('<mediaType');
    expect(f).not.toContain('<extension');
  });

  it('elements follow the schema sequence order', () => {
    const xml = C.SystemMetadataCodec.encode(F.sysmetaMax, 'v2');
    const order = [...xml.matchAll(/<([A-Za-z]+)[ >]/g)].map((m) => m[1]);
    const top = ['serialVersion', 'identifier', 'formatId', 'size', 'checksum', 'submitter', 'rightsHolder', 'accessPolicy', 'replicationPolicy', 'obsoletes', 'obsoletedBy', 'archived', 'dateUploaded', 'dateSysMetadataModified', 'originMemberNode', 'authoritativeMemberNode', 'replica', 'seriesId', 'mediaType', 'fileName'];
    const positions = top.map((t) => order.indexOf(t));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('datetimes are written as UTC with milliseconds and Z', () => {
    const xml = C.SystemMetadataCodec.encode({ ...F.sysmetaMin, dateUploaded: new Date('2026-11-22T02:49:30.278+01:00') }, 'v2');
    expect(xml).toContain('<dateUploaded>2026-11-22T01:49:30.278Z</dateUploaded>');
  });

  it('encodeLog refuses v2-only events on v1 but writes them on v2', () => {
    expect(() => C.encodeLog(F.logV2, 'v1')).toThrow(TypeError);
    expect(C.encodeLog(F.logV2, 'v2')).toContain('<event>archive</event>');
  });

  it('encoding a value that breaks the schema is a TypeError (programming error)', () => {
    expect(() => C.SystemMetadataCodec.encode({ ...F.sysmetaMin, checksum: undefined } as unknown as M.SystemMetadata)).toThrow(TypeError);
    expect(() => C.SystemMetadataCodec.encode({ ...F.sysmetaMin, size: 1.5 })).toThrow(TypeError);
    expect(() => C.SystemMetadataCodec.encode({ ...F.sysmetaMin, identifier: 'a\u0001b' })).toThrow(TypeError);
    expect(() => C.NodeCodec.encode({ ...F.nodeMin, contactSubject: [] })).toThrow(TypeError);
  });

  it('decoded identifiers keep leading zeros and are never numbers', () => {
    const sm = C.SystemMetadataCodec.decode(C.SystemMetadataCodec.encode({ ...F.sysmetaMin, identifier: '0012', size: 12 }));
    expect(sm.identifier).toBe('0012');
    expect(sm.size).toBe(12);
    expect(C.IdentifierCodec.decode(C.IdentifierCodec.encode('1e5'))).toBe('1e5');
  });

  it('a long listing is encoded as parts of about 32 K characters that join to the whole document', () => {
    const many = 400;
    const list: M.ObjectList = { count: many, start: 0, total: many, objectInfo: Array.from({ length: many }, (_, i) => F.objectInfo(i)) };
    const parts = C.ObjectListCodec.encodeParts(list, 'v2');
    const whole = C.ObjectListCodec.encode(list, 'v2');
    expect(whole.length).toBeGreaterThan(3 * 32 * 1024);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join('')).toBe(whole);
    // No part near V8's large-object size: a part ends after the item that reached 32 K.
    for (const part of parts) expect(part.length).toBeLessThan(33 * 1024);
    expect(C.ObjectListCodec.decode(whole)).toStrictEqual(list);
    const log: M.Log = { count: many, start: 0, total: many, logEntry: Array.from({ length: many }, (_, i) => F.logEntry(i, 'read')) };
    expect(C.encodeLogParts(log, 'v1').join('')).toBe(C.encodeLog(log, 'v1'));
    expect(C.encodeLogParts(log, 'v1').length).toBeGreaterThan(2);
    // A short document stays one part.
    expect(C.ObjectListCodec.encodeParts(F.objectListOne, 'v2')).toEqual([C.ObjectListCodec.encode(F.objectListOne, 'v2')]);
  });

  it('a decoded byte buffer gives the same value as a string', () => {
    const xml = C.SystemMetadataCodec.encode(F.sysmetaMax);
    expect(C.SystemMetadataCodec.decode(new TextEncoder().encode(xml))).toStrictEqual(C.SystemMetadataCodec.decode(xml));
  });

  it('v2 documents decode with v1 codecs namespace-agnostically, and v1 documents decode as v2 models', () => {
    const v1 = C.SystemMetadataCodec.encode(F.sysmetaMax, 'v1');
    expect(C.SystemMetadataCodec.decode(v1)).toStrictEqual(stripSysmetaV2(F.sysmetaMax));
    expect(() => C.SystemMetadataCodec.decode(C.NodeCodec.encode(F.nodeMin))).toThrow(DecodeError);
  });
});
