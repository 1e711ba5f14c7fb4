// Property-based and mutation fuzzing of what the node parses from the outside: the XML
// decoder (system metadata and the other codecs: mutated valid documents, random text and
// bytes, deep nesting), identifier rules and datetime parsing. Invariant: every input either
// decodes or fails with a DecodeError (which the node answers as InvalidRequest), quickly;
// never another exception, a hang, or a value that cannot be written back.
// Fixed seed, bounded runs; FUZZ_RUNS=100000 (and FUZZ_SEED) for a longer run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertIdentifier,
  ChecksumCodec,
  DecodeError,
  formatDateTime,
  identifierProblem,
  IdentifierCodec,
  LogCodec,
  NodeCodec,
  ObjectListCodec,
  parseDateTime,
  SessionCodec,
  SystemMetadataCodec,
  type Codec,
} from '../src/index.js';
import { logV2, nodeMax, objectListMany, sessionMax, sysmetaMax, sysmetaMin, sysmetaOneEach } from './fixtures.js';

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200);
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const params = (scale = 1): fc.Parameters<unknown> => ({ seed: FUZZ_SEED, numRuns: Math.max(1, Math.round(FUZZ_RUNS * scale)), endOnFailure: true });
/** A single decode may take this long at most: generous, for a loaded CI machine; a hang or a blow-up exceeds it. */
const SLOW_MS = 3000;

/** Decodes or fails with a DecodeError, within SLOW_MS; returns the value when it decoded. */
function decodesOrRefuses<T>(codec: Codec<T>, input: string | Uint8Array): T | undefined {
  const started = performance.now();
  try {
    return codec.decode(input);
  } catch (e) {
    if (!DecodeError.is(e)) throw new Error(`${codec.rootName}: not a DecodeError but ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`, { cause: e });
    // The message goes back to the client: bounded, whatever the document.
    expect(e.message.length).toBeLessThan(1000);
    return undefined;
  } finally {
    const took = performance.now() - started;
    if (took > SLOW_MS) throw new Error(`${codec.rootName}: decode took ${Math.round(took)} ms`);
  }
}

/** Whatever decoded must encode and decode again to the same value (nothing accepted that cannot be served back). */
function roundTrips<T>(codec: Codec<T>, value: T): void {
  const again = codec.decode(codec.encode(value, 'v2'));
  expect(again).toEqual(value);
}

// Mutations of a valid document: what truncation, bit rot, a hostile client or a buggy
// serializer produce.
const FRAGMENTS = ['<', '>', '&', '&amp;', '&#0;', '&#x10FFFF;', '&#xD800;', ']]>', '<![CDATA[x]]>', '<!-- c -->', '<?pi x?>', '"', "'", '\u0000', '\uFFFE', '\uD800',
  '<a>', '</a>', '<x:y xmlns:x="urn:x">', 'xmlns="urn:other"', '<!DOCTYPE x [<!ENTITY e "e">]>', '&e;', '-1', '1e999', '9'.repeat(40), 'NaN', ' ', '\t', '\r\n',
  '<identifier/>', '<size>-5</size>', '<checksum algorithm="">', '<allow><subject>public</subject></allow>', '2024-02-30T00:00:00Z', 'T25:61:61'];

type Mutation = (doc: string) => string;
const mutation = (): fc.Arbitrary<Mutation> =>
  fc.oneof(
    fc.tuple(fc.nat(), fc.nat({ max: 40 })).map(([at, n]): Mutation => (doc) => { const i = at % (doc.length + 1); return doc.slice(0, i) + doc.slice(i + n); }),
    fc.tuple(fc.nat(), fc.constantFrom(...FRAGMENTS)).map(([at, s]): Mutation => (doc) => { const i = at % (doc.length + 1); return doc.slice(0, i) + s + doc.slice(i); }),
    fc.tuple(fc.nat(), fc.string({ unit: 'binary', maxLength: 8 })).map(([at, s]): Mutation => (doc) => { const i = at % (doc.length + 1); return doc.slice(0, i) + s + doc.slice(i); }),
    fc.tuple(fc.nat(), fc.nat({ max: 60 }), fc.nat()).map(([from, n, to]): Mutation => (doc) => {
      const i = from % (doc.length + 1);
      const j = to % (doc.length + 1);
      return doc.slice(0, j) + doc.slice(i, i + n) + doc.slice(j);
    }),
    fc.nat().map((at): Mutation => (doc) => doc.slice(0, at % (doc.length + 1))),
    // Rename one element: an unknown, a known one in the wrong place, or a case change.
    fc.tuple(fc.nat(), fc.constantFrom('identifier', 'size', 'Size', 'allow', 'replica', 'foo', 'x:identifier')).map(([k, name]): Mutation => (doc) => {
      const tags = [...doc.matchAll(/<\/?([A-Za-z_][\w.:-]*)/g)];
      if (tags.length === 0) return doc;
      const t = tags[k % tags.length]!;
      return doc.slice(0, t.index + (t[0].startsWith('</') ? 2 : 1)) + name + doc.slice(t.index + t[0].length);
    }),
    // Replace one text value with something hostile.
    fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 20 }))).map(([k, v]): Mutation => (doc) => {
      const texts = [...doc.matchAll(/>([^<]+)</g)];
      if (texts.length === 0) return doc;
      const t = texts[k % texts.length]!;
      return doc.slice(0, t.index + 1) + v + doc.slice(t.index + 1 + t[1]!.length);
    }),
  );

const documents: Array<{ codec: Codec<any>; xml: string }> = [
  { codec: SystemMetadataCodec, xml: SystemMetadataCodec.encode(sysmetaMax, 'v2') },
  { codec: SystemMetadataCodec, xml: SystemMetadataCodec.encode(sysmetaOneEach, 'v1') },
  { codec: SystemMetadataCodec, xml: SystemMetadataCodec.encode(sysmetaMin, 'v2') },
  { codec: ObjectListCodec, xml: ObjectListCodec.encode(objectListMany, 'v2') },
  { codec: LogCodec, xml: LogCodec.encode(logV2, 'v2') },
  { codec: NodeCodec, xml: NodeCodec.encode(nodeMax, 'v2') },
  { codec: SessionCodec, xml: SessionCodec.encode(sessionMax, 'v2') },
  { codec: ChecksumCodec, xml: ChecksumCodec.encode({ algorithm: 'MD5', value: 'd41d8cd98f00b204e9800998ecf8427e' }, 'v2') },
  { codec: IdentifierCodec, xml: IdentifierCodec.encode('doi:10.1/a&b<c>', 'v2') },
];

describe('XML decoder under fuzzing', () => {
  it('mutated valid documents of every codec decode or give a DecodeError, and what decodes round-trips', () => {
    fc.assert(
      fc.property(fc.nat({ max: documents.length - 1 }), fc.array(mutation(), { minLength: 1, maxLength: 4 }), (which, mutations) => {
        const { codec, xml } = documents[which]!;
        const mutated = mutations.reduce((doc, m) => m(doc), xml);
        const value = decodesOrRefuses(codec, mutated);
        if (value !== undefined) roundTrips(codec, value);
        // The same document as bytes (how a request body arrives).
        decodesOrRefuses(codec, Buffer.from(mutated, 'utf8'));
      }),
      params(1.5),
    );
  }, 120_000);

  it('random text and random bytes give a DecodeError (or a document), never anything else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: fc.constantFrom('<', '>', '/', 'a', '=', '"', '&', ';', '#', 'x', '!', '?', '-', ' ', ':'), maxLength: 200 })), (text) => {
        decodesOrRefuses(SystemMetadataCodec, text);
        decodesOrRefuses(IdentifierCodec, text);
      }),
      params(),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.constantFrom([], [0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff], [...Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>')]), (bytes, prefix) => {
        decodesOrRefuses(SystemMetadataCodec, new Uint8Array([...prefix, ...bytes]));
      }),
      params(),
    );
  });

  it('characters XML does not allow are refused when raw, as they are when referenced', () => {
    const xml = SystemMetadataCodec.encode(sysmetaMin, 'v2');
    for (const c of ['\u0000', '\u0001', '\u001F', '\uFFFE', '\uFFFF', '\uD800', '\uDC00']) {
      const doc = xml.replace('<rightsHolder>', `<rightsHolder>a${c}`);
      expect(() => SystemMetadataCodec.decode(doc), JSON.stringify(c)).toThrow(/not allowed in XML/);
      expect(() => SystemMetadataCodec.decode(xml.replace('<rightsHolder>', `<rightsHolder>&#${c.charCodeAt(0)};`))).toThrow(DecodeError);
    }
    // Tab, newline and astral characters stay fine.
    expect(SystemMetadataCodec.decode(xml.replace('<rightsHolder>', '<rightsHolder>\u{1F600}\t')).rightsHolder).toMatch(/^\u{1F600}/u);
  });

  it('a refusal of a document with thousands of open tags has a short message', () => {
    const e = (() => { try { SystemMetadataCodec.decode(`<systemMetadata>${'<accessPolicy><allow>'.repeat(10_000)}`); } catch (err) { return err as Error; } })();
    expect(DecodeError.is(e)).toBe(true);
    expect(e!.message.length).toBeLessThan(1000);
  });

  it('deep nesting and long documents are refused or read without a stack overflow or a slow parse', () => {
    for (const depth of [100, 1_000, 10_000, 100_000]) {
      const nested = `<systemMetadata xmlns="http://ns.dataone.org/service/types/v2.0">${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}</systemMetadata>`;
      decodesOrRefuses(SystemMetadataCodec, nested);
      const unclosed = `<systemMetadata>${'<accessPolicy><allow>'.repeat(depth)}`;
      decodesOrRefuses(SystemMetadataCodec, unclosed);
      const attrs = `<systemMetadata ${Array.from({ length: Math.min(depth, 10_000) }, (_, i) => `a${i}="${i}"`).join(' ')}/>`;
      decodesOrRefuses(SystemMetadataCodec, attrs);
    }
    const many = SystemMetadataCodec.encode({ ...sysmetaMin, accessPolicy: { allow: Array.from({ length: 5_000 }, (_, i) => ({ subject: [`CN=s${i}`], permission: ['read' as const] })) } }, 'v2');
    expect(decodesOrRefuses(SystemMetadataCodec, many)?.accessPolicy?.allow).toHaveLength(5_000);
  });
});

describe('identifier rules under fuzzing', () => {
  it('identifierProblem never throws; an accepted identifier survives an XML round trip', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 900 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary-ascii', minLength: 790, maxLength: 810 })), (id) => {
        const problem = identifierProblem(id);
        if (problem === undefined) {
          expect(assertIdentifier(id)).toBe(id);
          expect(IdentifierCodec.decode(IdentifierCodec.encode(id, 'v2'))).toBe(id);
          expect(SystemMetadataCodec.decode(SystemMetadataCodec.encode({ ...sysmetaMin, identifier: id }, 'v2')).identifier).toBe(id);
        } else {
          expect(() => assertIdentifier(id)).toThrow(DecodeError);
        }
      }),
      params(2),
    );
  });
});

describe('datetime parsing under fuzzing', () => {
  const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
  const plausible = fc.tuple(
    fc.oneof(digits(4), digits(5), fc.constant('-0001'), fc.constant('0000')), digits(2), digits(2), fc.constantFrom('T', ' ', 't'), digits(2), digits(2), digits(2),
    fc.oneof(fc.constant(''), fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 12 }).map((f) => `.${f}`)),
    fc.constantFrom('', 'Z', '+00:00', '-05:30', '+14:00', '+1400', '+14', '-99:99', '+24:00', 'z'),
  ).map(([y, mo, d, t, h, mi, s, f, z]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f}${z}`);

  it('any text parses to a valid Date or gives a DecodeError; what parses formats and parses back to the same instant', () => {
    fc.assert(
      fc.property(fc.oneof(plausible, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: fc.constantFrom(...'0123456789-:TZ.+ '), maxLength: 35 })), (text) => {
        let date: Date;
        try {
          date = parseDateTime(text);
        } catch (e) {
          if (!DecodeError.is(e)) throw e;
          return;
        }
        expect(Number.isNaN(date.getTime()), text).toBe(false);
        expect(parseDateTime(formatDateTime(date)).getTime(), text).toBe(date.getTime());
      }),
      params(4),
    );
  });

  it('a datetime outside years 0001-9999 (after its zone) is refused, not accepted and then written as an expanded year', () => {
    for (const text of ['79667-04-02 01:59:06.7349957+14:00', '10000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '0001-01-01T00:00:00+01:00', '0000-06-01T00:00:00Z', '-0001-01-01T00:00:00Z']) {
      expect(() => parseDateTime(text), text).toThrow(DecodeError);
    }
    expect(formatDateTime(parseDateTime('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31T23:59:59.999Z');
    expect(formatDateTime(parseDateTime('0001-01-01T00:00:00Z'))).toBe('0001-01-01T00:00:00.000Z');
  });

  it('every instant the protocol can carry formats and parses back exactly', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        expect(parseDateTime(formatDateTime(d)).getTime()).toBe(d.getTime());
      }),
      params(2),
    );
  });
});
