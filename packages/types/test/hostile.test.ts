/** Hostile input: every case is refused with a DecodeError, quickly. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as C from '../src/codecs.js';
import { DecodeError } from '../src/decode-error.js';
import { exceptionFromXml } from '../src/exceptions.js';
import { DEFAULT_MAX_XML_BYTES, MAX_XML_DEPTH, parseXml } from '../src/xml/safe-parse.js';

const V2 = 'http://ns.dataone.org/service/types/v2.0';

function refusedQuickly(input: string | Uint8Array, decode: (x: string | Uint8Array) => unknown = (x) => C.SystemMetadataCodec.decode(x)): DecodeError {
  const t0 = performance.now();
  let err: unknown;
  try {
    decode(input);
  } catch (e) {
    err = e;
  }
  const ms = performance.now() - t0;
  expect(ms).toBeLessThan(1000);
  expect(DecodeError.is(err), `expected a DecodeError, got ${String(err)}`).toBe(true);
  return err as DecodeError;
}

const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<d1:systemMetadata xmlns:d1="${V2}"><identifier>&lol9;</identifier><formatId>text/csv</formatId><size>1</size><checksum algorithm="MD5">a</checksum><rightsHolder>p</rightsHolder></d1:systemMetadata>`;

const XXE = `<?xml version="1.0"?>
<!DOCTYPE d1:systemMetadata [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<d1:systemMetadata xmlns:d1="${V2}"><identifier>&x;</identifier><formatId>text/csv</formatId><size>1</size><checksum algorithm="MD5">a</checksum><rightsHolder>p</rightsHolder></d1:systemMetadata>`;

describe('hostile input is refused with a DecodeError in under a second', () => {
  it('billion-laughs entity bomb', () => {
    expect(refusedQuickly(BILLION_LAUGHS).message).toMatch(/DOCTYPE|entity/i);
  });

  it('external entity (XXE)', () => {
    const e = refusedQuickly(XXE);
    expect(e.message).not.toContain('root:');
    expect(refusedQuickly(Buffer.from(XXE))).toBeInstanceOf(Error);
  });

  it('a parameter entity and an external DTD', () => {
    refusedQuickly(`<?xml version="1.0"?><!DOCTYPE x SYSTEM "http://evil.example/x.dtd"><x/>`);
    refusedQuickly(`<!DOCTYPE x [<!ENTITY % p SYSTEM "http://evil.example/p">%p;]><x/>`);
    refusedQuickly(`<!doctype x><x/>`);
  });

  it('a 50 MB document (default limit)', () => {
    expect(DEFAULT_MAX_XML_BYTES).toBeLessThan(50 * 1024 * 1024);
    const head = `<d1:systemMetadata xmlns:d1="${V2}"><identifier>`;
    const big = head + 'x'.repeat(50 * 1024 * 1024) + '</identifier></d1:systemMetadata>';
    expect(refusedQuickly(big).message).toMatch(/larger than the limit/);
    expect(refusedQuickly(Buffer.from(big)).message).toMatch(/larger than the limit/);
  });

  it('the size limit counts UTF-8 bytes and can be lowered', () => {
    const doc = `<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">${'é'.repeat(600)}</d1:identifier>`;
    expect(C.IdentifierCodec.decode(doc)).toHaveLength(600);
    expect(refusedQuickly(doc, (x) => C.IdentifierCodec.decode(x, { maxBytes: 1000 })).message).toMatch(/larger than the limit/);
  });

  it.each([
    ['unclosed element', `<d1:systemMetadata xmlns:d1="${V2}"><identifier>x</identifier>`],
    ['mismatched tags', `<d1:systemMetadata xmlns:d1="${V2}"><identifier>x</formatId></d1:systemMetadata>`],
    ['two roots', `<d1:systemMetadata xmlns:d1="${V2}"/><d1:systemMetadata xmlns:d1="${V2}"/>`],
    ['attribute without quotes', `<d1:systemMetadata xmlns:d1=${V2}/>`],
    ['duplicated attribute', `<d1:checksum xmlns:d1="${V2}" algorithm="MD5" algorithm="SHA-1">x</d1:checksum>`],
    ['bare less-than in text', `<d1:systemMetadata xmlns:d1="${V2}"><identifier>a<b</identifier></d1:systemMetadata>`],
    ['unterminated comment', `<!-- never closed <d1:systemMetadata xmlns:d1="${V2}"/>`],
    ['unterminated CDATA', `<d1:systemMetadata xmlns:d1="${V2}"><identifier><![CDATA[x</identifier></d1:systemMetadata>`],
    ['text only', 'just some text'],
    ['JSON', '{"identifier":"x"}'],
    ['HTML error page', '<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>'],
    ['truncated declaration', '<?xml version="1.0"'],
    ['deeply nested', '<a>'.repeat(100_000) + '</a>'.repeat(100_000)],
    ['prototype-polluting element name', `<d1:systemMetadata xmlns:d1="${V2}"><__proto__><polluted>1</polluted></__proto__></d1:systemMetadata>`],
    ['NUL character', `<d1:systemMetadata xmlns:d1="${V2}"><identifier>a\u0000b</identifier></d1:systemMetadata>`],
  ])('malformed XML: %s', (_l, xml) => {
    refusedQuickly(xml);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['empty string', ''],
    ['whitespace only', ' \n\t '],
    ['empty bytes', new Uint8Array(0)],
    ['a BOM and nothing else', '\uFEFF'],
  ])('empty input: %s', (_l, input) => {
    expect(refusedQuickly(input).message).toMatch(/empty|no root/);
  });

  it('a binary blob', () => {
    for (let i = 0; i < 20; i++) refusedQuickly(randomBytes(64 * 1024));
    refusedQuickly(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03])); // gzip header
    refusedQuickly(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'));
    refusedQuickly(Buffer.concat([Buffer.from(`<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">`), Buffer.from([0xc3, 0x28]), Buffer.from('</d1:identifier>')]), (x) => C.IdentifierCodec.decode(x));
  });

  // The parser reads a document in one pass, a few µs per element: a document of 10,000
  // elements (200 KB) is refused well within the second; one at the 4 MiB limit in about 0.4 s.
  it('a document with many elements and one bad one is refused quickly', () => {
    const entries = '<subject>s</subject>'.repeat(10_000);
    const xml = `<d1:subjectList xmlns:d1="http://ns.dataone.org/service/types/v1">${entries}<bogus/></d1:subjectList>`;
    expect(xml.length).toBeLessThan(DEFAULT_MAX_XML_BYTES);
    refusedQuickly(xml, (x) => C.SubjectListCodec.decode(x));
  });

  it('error bodies go through the same guards', () => {
    refusedQuickly(BILLION_LAUGHS.replace(/<d1:systemMetadata[\s\S]*$/, '<error name="NotFound" errorCode="404" detailCode="1">&lol9;</error>'), exceptionFromXml);
    refusedQuickly('<html><body>Internal Server Error</body></html>', exceptionFromXml);
    refusedQuickly('', exceptionFromXml);
    refusedQuickly(`<error name="NotFound" errorCode="404" detailCode="0"><description>${'x'.repeat(2 << 20)}</description></error>`, exceptionFromXml);
  });

  it(`elements nested deeper than ${MAX_XML_DEPTH} levels are refused, at any size`, () => {
    const nested = (depth: number) => '<a>'.repeat(depth) + '</a>'.repeat(depth);
    expect(parseXml(nested(MAX_XML_DEPTH)).rootName).toBe('a');
    expect(refusedQuickly(nested(MAX_XML_DEPTH + 1), (x) => parseXml(x)).message).toMatch(/nested more than 256 levels/);
    expect(refusedQuickly(nested(200_000), (x) => parseXml(x)).message).toMatch(/nested more than 256 levels/);
  });

  it('element names that are Object properties are plain keys of the tree', () => {
    const { root } = parseXml('<r><__proto__><x>1</x></__proto__><constructor>2</constructor><toString/></r>');
    expect(Object.keys(root).sort()).toEqual(['#text', '__proto__', 'constructor', 'toString']);
    expect((root.__proto__ as unknown as Array<Record<string, unknown>>)[0]!.x).toEqual([expect.objectContaining({ '#text': '1' })]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('parseXml reports the root local name and namespace', () => {
    expect(parseXml(`<ns9:thing xmlns:ns9="urn:x"/>`)).toMatchObject({ rootName: 'thing', rootNamespace: 'urn:x' });
    expect(parseXml(`<thing/>`)).toMatchObject({ rootName: 'thing', rootNamespace: '' });
  });
});
