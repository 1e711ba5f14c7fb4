import { join } from 'node:path';
/** Datetimes, identifiers, checksum algorithm names and the federation's format list. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as CK from '../src/checksum.js';
import { ObjectFormatListCodec } from '../src/codecs.js';
import { formatDateTime, parseDateTime, toProtocolPrecision } from '../src/datetime.js';
import { DecodeError } from '../src/decode-error.js';
import * as FM from '../src/formats.js';
import { assertIdentifier, IDENTIFIER_MAX_LENGTH, identifierProblem, isValidIdentifier } from '../src/identifier.js';
import { validateMany } from './xsd.js';

/** The vendored specification (spec/ at the repository root; see spec/README.md). */
const SPEC_DIR = join(import.meta.dirname, '..', '..', '..', 'spec');

describe('parseDateTime', () => {
  it.each([
    ['2024-01-31T10:00:00Z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00.423410+00:00', '2024-01-31T10:00:00.423Z'],
    ['2024-01-31T10:00:00.999999Z', '2024-01-31T10:00:00.999Z'],
    ['2024-01-31T10:00:00.4Z', '2024-01-31T10:00:00.400Z'],
    ['2024-01-31T10:00:00.42Z', '2024-01-31T10:00:00.420Z'],
    ['2024-01-31T10:00:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00.5', '2024-01-31T10:00:00.500Z'],
    ['2024-01-31T10:00:00+0530', '2024-01-31T04:30:00.000Z'],
    ['2024-01-31T10:00:00+05:30', '2024-01-31T04:30:00.000Z'],
    ['2024-01-31T10:00:00-07:00', '2024-01-31T17:00:00.000Z'],
    ['2024-01-31T10:00:00-0700', '2024-01-31T17:00:00.000Z'],
    ['2024-01-31T10:00:00+02', '2024-01-31T08:00:00.000Z'],
    ['2024-01-31T23:30:00-01:00', '2024-02-01T00:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2024-01-31T24:00:00Z', '2024-02-01T00:00:00.000Z'],
    ['  2024-01-31T10:00:00Z \n', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31', '2024-01-31T00:00:00.000Z'],
    ['1900-01-01T00:00:00.000+00:00', '1900-01-01T00:00:00.000Z'],
    ['0050-06-15T00:00:00Z', '0050-06-15T00:00:00.000Z'],
  ])('%s → %s', (text, iso) => {
    expect(parseDateTime(text).toISOString()).toBe(iso);
  });

  it.each([
    '',
    'yesterday',
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-32T00:00:00Z',
    '2024-01-31T25:00:00Z',
    '2024-01-31T24:00:01Z',
    '2024-01-31T10:60:00Z',
    '2024-01-31T10:00:60Z',
    '2024-01-31T10:00:00+15:00',
    '2024-01-31T10:00:00+05:60',
    '2024-01-31T10:00:00 Z',
    '2024-01-31T10:00Z',
    '2024-1-31T10:00:00Z',
    '2024-01-31T10:00:00ZZ',
    '2024-01-31T10:00:00.Z',
    '1706695200',
  ])('refuses %j with a DecodeError naming the field', (text) => {
    let err: unknown;
    try {
      parseDateTime(text, 'systemMetadata/dateUploaded');
    } catch (e) {
      err = e;
    }
    expect(DecodeError.is(err)).toBe(true);
    expect((err as DecodeError).field).toBe('systemMetadata/dateUploaded');
  });

  it('defaults the field name', () => {
    expect(() => parseDateTime('x')).toThrow(/dateTime/);
  });
});

describe('formatDateTime', () => {
  it('writes YYYY-MM-DDTHH:mm:ss.sssZ in UTC', () => {
    expect(formatDateTime(new Date('2026-11-22T01:49:30.278Z'))).toBe('2026-11-22T01:49:30.278Z');
    expect(formatDateTime(new Date(Date.UTC(2024, 0, 1)))).toBe('2024-01-01T00:00:00.000Z');
    expect(formatDateTime(parseDateTime('2024-01-31T10:00:00.423410-07:00'))).toBe('2024-01-31T17:00:00.423Z');
    for (const d of [new Date(0), new Date(), new Date('1999-12-31T23:59:59.999Z')]) {
      expect(formatDateTime(d)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(parseDateTime(formatDateTime(d)).getTime()).toBe(d.getTime());
    }
  });

  it('refuses an invalid Date', () => {
    expect(() => formatDateTime(new Date('nope'))).toThrow(RangeError);
  });

  it('writes exactly what toISOString writes, at day boundaries, outside 1970–9999 and for random instants', () => {
    const edges = [0, 1, 9, 99, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, -1, -86_400_001, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(-1, 5, 1)];
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const samples = [...edges, ...Array.from({ length: 20_000 }, () => Math.floor(random() * 300e12) - 50e12)];
    for (const t of samples) expect(formatDateTime(new Date(t)), String(t)).toBe(new Date(t).toISOString());
  });

  it('toProtocolPrecision keeps millisecond precision', () => {
    const d = new Date('2024-01-31T10:00:00.123Z');
    expect(toProtocolPrecision(d).getTime()).toBe(d.getTime());
    expect(toProtocolPrecision(d)).not.toBe(d);
  });
});

describe('identifiers', () => {
  it.each(['a', 'doi:10.5063/F1&2<3>', 'urn:uuid:café-中文-𝔘', 'ark:/13030/m5%2Fabc', 'id?q=1#frag', 'x'.repeat(IDENTIFIER_MAX_LENGTH), '𝔘'.repeat(800), '0012'])('accepts %j', (id) => {
    expect(identifierProblem(id)).toBeUndefined();
    expect(isValidIdentifier(id)).toBe(true);
    expect(assertIdentifier(id)).toBe(id);
  });

  it.each([
    ['empty', ''],
    ['a space', 'a b'],
    ['leading space', ' a'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['a non-breaking space', 'a\u00a0b'],
    ['an ideographic space', 'a\u3000b'],
    ['801 characters', 'x'.repeat(801)],
    ['801 astral characters', '𝔘'.repeat(801)],
    ['a control character', 'a\u0001b'],
    ['a lone surrogate', 'a\ud800b'],
    ['U+FFFF', 'a\uffffb'],
  ])('refuses an identifier with %s', (_l, id) => {
    expect(identifierProblem(id)).toBeTypeOf('string');
    expect(isValidIdentifier(id)).toBe(false);
    let err: unknown;
    try {
      assertIdentifier(id, 'pid');
    } catch (e) {
      err = e;
    }
    expect(DecodeError.is(err)).toBe(true);
    expect((err as DecodeError).field).toBe('pid');
  });
});

describe('checksum algorithms', () => {
  it.each([
    ['SHA-1', 'SHA-1'],
    ['sha1', 'SHA-1'],
    ['sha-1', 'SHA-1'],
    ['SHA', 'SHA-1'],
    [' SHA1 ', 'SHA-1'],
    ['MD5', 'MD5'],
    ['md5', 'MD5'],
    ['MD-5', 'MD5'],
    ['SHA-256', 'SHA-256'],
    ['sha256', 'SHA-256'],
  ])('%j → %s', (name, canonical) => {
    expect(CK.normalizeChecksumAlgorithm(name)).toBe(canonical);
  });

  it.each(['', 'CRC32', 'SHA-512x', 'md4', 'toString', 'constructor', '__proto__'])('%j is unknown', (name) => {
    expect(CK.normalizeChecksumAlgorithm(name)).toBeUndefined();
  });

  it('hashes with the named algorithm', () => {
    expect(CK.createChecksumHash('MD5').update('').digest('hex')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(CK.createChecksumHash('SHA-1').update('abc').digest('hex')).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(CK.createChecksumHash('SHA-256').update('').digest('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(CK.DEFAULT_CHECKSUM_ALGORITHM).toBe('SHA-1');
    expect([...CK.CHECKSUM_ALGORITHMS]).toEqual(['SHA-1', 'MD5', 'SHA-256']);
  });

  it('compares digests case-insensitively', () => {
    expect(CK.sameDigest('ABCDEF', 'abcdef')).toBe(true);
    expect(CK.sameDigest(' abc ', 'ABC')).toBe(true);
    expect(CK.sameDigest('abc', 'abd')).toBe(false);
  });
});

describe('the federation format list', () => {
  it('looks formats up by id', () => {
    expect(FM.formatById('text/csv')).toMatchObject({ formatId: 'text/csv', formatType: 'DATA', mediaType: 'text/csv', extension: 'csv' });
    expect(FM.formatById('TEXT/CSV')).toBeUndefined();
    expect(FM.formatById('no/such-format')).toBeUndefined();
    expect(FM.formatById('toString')).toBeUndefined();
  });

  it('has the EML formats as METADATA', () => {
    for (const id of ['eml://ecoinformatics.org/eml-2.0.0', 'eml://ecoinformatics.org/eml-2.0.1', 'eml://ecoinformatics.org/eml-2.1.0', 'eml://ecoinformatics.org/eml-2.1.1', 'https://eml.ecoinformatics.org/eml-2.2.0']) {
      expect(FM.formatById(id)?.formatType, id).toBe('METADATA');
    }
  });

  it('looks formats up by extension, with or without the dot, any case', () => {
    expect(FM.formatByExtension('csv')?.formatId).toBe('text/csv');
    expect(FM.formatByExtension('.CSV')?.formatId).toBe('text/csv');
    expect(FM.formatByExtension('xml')?.formatType).toBe('DATA');
    expect(FM.formatByExtension('nope')).toBeUndefined();
    expect(FM.formatByExtension('')).toBeUndefined();
  });

  it('looks formats up by media type, ignoring parameters and case', () => {
    expect(FM.formatByMediaType('text/csv')?.formatId).toBe('text/csv');
    expect(FM.formatByMediaType('Text/CSV; charset=utf-8')?.formatId).toBe('text/csv');
    expect(FM.formatByMediaType('application/octet-stream')?.formatId).toBe('application/octet-stream');
    expect(FM.formatByMediaType('application/x-nope')).toBeUndefined();
  });

  it('falls back to application/octet-stream for unknown or missing extensions', () => {
    expect(FM.OCTET_STREAM_FORMAT_ID).toBe('application/octet-stream');
    expect(FM.formatById(FM.OCTET_STREAM_FORMAT_ID)).toBeDefined();
    expect(FM.formatForFileName('data/table.csv').formatId).toBe('text/csv');
    expect(FM.formatForFileName('TABLE.CSV').formatId).toBe('text/csv');
    for (const name of ['blob.unknownext', 'README', '.hidden', 'dir.d/file', 'dir.d\\file', 'trailing.']) {
      expect(FM.formatForFileName(name).formatId, name).toBe('application/octet-stream');
    }
  });

  it('every format has an id, a name and a known type; ids are unique', () => {
    const all = FM.allFormats();
    expect(all.length).toBeGreaterThan(100);
    expect(new Set(all.map((f) => f.formatId)).size).toBe(all.length);
    for (const f of all) {
      expect(f.formatId.trim()).not.toBe('');
      expect(f.formatName.trim()).not.toBe('');
      expect(['DATA', 'METADATA', 'RESOURCE']).toContain(f.formatType);
      expect(f.extension).not.toMatch(/^\./);
    }
  });

  it('objectFormatList() is the shared spec list, encodes schema-valid on v1 and v2 and round trips', () => {
    const list = FM.objectFormatList();
    expect(list.count).toBe(list.objectFormat.length);
    expect(list.total).toBe(list.objectFormat.length);
    const official = ObjectFormatListCodec.decode(readFileSync(join(SPEC_DIR, 'formats/objectFormatListV2.xml')));
    expect(list.count).toBe(official.count);
    expect(list.objectFormat.map((f) => [f.formatId, f.formatName, f.formatType])).toEqual(official.objectFormat.map((f) => [f.formatId, f.formatName, f.formatType]));
    // Where the official list gives a media type and extension, ours agrees (one entry,
    // application/bagit-097, has neither there: the generated data gives it octet-stream).
    official.objectFormat.forEach((f, i) => {
      if (f.mediaType) expect(list.objectFormat[i]!.mediaType, f.formatId).toEqual(f.mediaType);
      if (f.extension) expect(list.objectFormat[i]!.extension, f.formatId).toBe(f.extension);
    });
    const v1 = ObjectFormatListCodec.encode(list, 'v1');
    const v2 = ObjectFormatListCodec.encode(list, 'v2');
    expect(validateMany([v1, v2]).map((r) => r.errors)).toEqual([[], []]);
    expect(ObjectFormatListCodec.decode(v2)).toStrictEqual(list);
    expect(FM.toObjectFormat(FM.formatById('text/csv')!)).toEqual({ formatId: 'text/csv', formatName: FM.formatById('text/csv')!.formatName, formatType: 'DATA', mediaType: { name: 'text/csv', property: [] }, extension: 'csv' });
  });
});
