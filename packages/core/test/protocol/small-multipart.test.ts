// parseMultipart reads a small body (declared Content-Length up to SMALL_BODY_BYTES) whole and
// splits it itself when it has the plain shape, leaving everything else to the streaming parser.
// The shortcut must never change an answer: every body here, generated or mutated, is parsed
// both ways (with a Content-Length: shortcut or fallback; without one: the streaming parser
// alone) and both must give the same fields and streamed bytes, or fail with the same message.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DataONEException } from '@memberkit/types';
import { parseMultipart } from '../../src/http/multipart.js';
import { plainFormBoundary, plainFormParts, SMALL_BODY_BYTES } from '../../src/http/small-multipart.js';

const BOUNDARY = 'mk-boundary-0123';
const RUNS = Number(process.env.SMALL_MULTIPART_RUNS ?? 400);

type Outcome = { fields: Record<string, string>; streamed: string | null } | { error: string };

async function parse(body: Buffer, contentType: string, declareLength: boolean): Promise<Outcome> {
  const headers: Record<string, string> = { 'Content-Type': contentType };
  if (declareLength) headers['Content-Length'] = String(body.length);
  const request = new Request('http://node/v2/object', { method: 'POST', body, headers });
  try {
    const result = await parseMultipart('MNStorage.create', request, {
      streamName: 'object',
      onStream: async (stream) => {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(Buffer.from(chunk));
        return Buffer.concat(chunks);
      },
    });
    const fields = Object.fromEntries([...result.fields].map(([name, value]) => [name, value.toString('hex')]));
    return { fields, streamed: result.streamed === undefined ? null : result.streamed.toString('hex') };
  } catch (err) {
    return { error: err instanceof DataONEException ? `${err.errorCode} ${err.description}` : String(err) };
  }
}

/** Parsed with a declared length (the shortcut where it applies) and without (the streaming parser). */
async function bothWays(body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`): Promise<{ small: Outcome; streamed: Outcome; shortcut: boolean }> {
  const boundary = plainFormBoundary(contentType);
  const shortcut = boundary !== undefined && plainFormParts(body, boundary) !== undefined;
  return { small: await parse(body, contentType, true), streamed: await parse(body, contentType, false), shortcut };
}

interface PartSpec {
  name: string;
  filename?: string;
  type?: string;
  encoding?: boolean;
  data: Buffer;
}

function form(parts: PartSpec[], boundary = BOUNDARY): Buffer {
  const pieces: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n`;
    if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
    if (p.encoding) head += 'Content-Transfer-Encoding: binary\r\n';
    pieces.push(Buffer.from(`${head}\r\n`, 'latin1'), p.data, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

// Bytes that stress the split: line ends, dashes, the boundary and pieces of it, invalid UTF-8.
const TRICKY = ['\r\n', '\r', '\n', '--', `--${BOUNDARY}`, `\r\n--${BOUNDARY}X`, `\r\n--${BOUNDARY.slice(0, 5)}`, '\r\n\r\n', '"', 'é'];
const data = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 8 })), { maxLength: 6 }).map((s) => Buffer.from(s.join(''), 'utf8')),
  fc.constant(Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x80])),
);
const name = fc.oneof(fc.constantFrom('pid', 'object', 'sysmeta', 'message', ''), fc.string({ maxLength: 6 }).filter((s) => !/["\\\r\n]/.test(s)));
const part: fc.Arbitrary<PartSpec> = fc.record(
  {
    name,
    filename: fc.constantFrom('o.bin', 'sysmeta.xml', '', 'a/b.txt'),
    type: fc.constantFrom(
      'application/octet-stream', 'text/xml', 'TEXT/PLAIN', 'application/octet-stream', 'text/xml', 'text/xml; charset=UTF-8', 'application/xml;charset=latin1',
      'text/plain; charset=US-ASCII', 'text/plain; charset="utf-8"', 'text/plain; charset=utf8', 'text/plain; charset=ISO-8859-1', 'text/plain; charset=utf-8; format=flowed',
    ),
    encoding: fc.boolean(),
    data,
  },
  { requiredKeys: ['name', 'data'] },
);

type Mutation = (b: Buffer) => Buffer;
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.nat({ max: 40 })).map(([at, n]): Mutation => (b) => { const i = at % (b.length + 1); return Buffer.concat([b.subarray(0, i), b.subarray(i + n)]); }),
  fc.tuple(fc.nat(), fc.constantFrom(...TRICKY, ' ', '\t', 'X-Other: 1\r\n', 'preamble\r\n', '--\r\n', 'epilogue')).map(([at, s]): Mutation => (b) => { const i = at % (b.length + 1); return Buffer.concat([b.subarray(0, i), Buffer.from(s, 'utf8'), b.subarray(i)]); }),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, v]): Mutation => (b) => { const c = Buffer.from(b); if (c.length > 0) c[at % c.length] = v; return c; }),
);

describe('parseMultipart on small bodies', () => {
  it('splits the forms clients send without the streaming parser, with the same parts', async () => {
    const sysmeta = Buffer.from('<?xml version="1.0"?><d1:systemMetadata xmlns:d1="http://ns.dataone.org/service/types/v2.0"/>');
    const body = form([
      { name: 'pid', data: Buffer.from('urn:uuid:1') },
      { name: 'object', filename: 'object.bin', type: 'application/octet-stream', data: Buffer.from('a,b\r\n1,2\r\n') },
      { name: 'sysmeta', filename: 'sysmeta.xml', type: 'text/xml', data: sysmeta },
    ]);
    const { small, streamed, shortcut } = await bothWays(body);
    expect(shortcut).toBe(true);
    expect(small).toEqual(streamed);
    expect(small).toEqual({ fields: { pid: Buffer.from('urn:uuid:1').toString('hex'), sysmeta: sysmeta.toString('hex') }, streamed: Buffer.from('a,b\r\n1,2\r\n').toString('hex') });
  });

  it('reads a text field as the streaming parser does: invalid UTF-8 replaced, a file part kept as bytes', async () => {
    const bad = Buffer.from([0x61, 0xc3, 0x28, 0xff, 0x62]);
    const body = form([
      { name: 'pid', data: bad },
      { name: 'raw', filename: 'r', data: bad },
      { name: 'object', data: Buffer.alloc(0) },
    ]);
    const { small, streamed, shortcut } = await bothWays(body);
    expect(shortcut).toBe(true);
    expect(small).toEqual(streamed);
    expect(small).toMatchObject({ fields: { pid: Buffer.from('a\uFFFD(\uFFFDb').toString('hex'), raw: bad.toString('hex') }, streamed: '' });
  });

  it('takes a charset on a part: UTF-8 fields and file parts of any charset split here, fields of other charsets decoded by the streaming parser', async () => {
    const e = Buffer.from('é', 'utf8');
    const latin = Buffer.from([0xe9]);
    // Java clients: text parts as `text/plain; charset=…`, files as octet-stream.
    const java = form([
      { name: 'pid', type: 'text/plain; charset=UTF-8', encoding: true, data: Buffer.concat([Buffer.from('p-'), e]) },
      { name: 'object', filename: 'o', type: 'application/octet-stream; charset=ISO-8859-1', data: latin },
      { name: 'sysmeta', filename: 's.xml', type: 'text/xml; charset="US-ASCII"', data: latin },
    ]);
    const both = await bothWays(java);
    expect(both.shortcut).toBe(true);
    expect(both.small).toEqual(both.streamed);
    expect(both.small).toEqual({ fields: { pid: Buffer.from('p-é').toString('hex'), sysmeta: latin.toString('hex') }, streamed: latin.toString('hex') });
    // A field in Latin-1: its text is 'é' (the streaming parser decodes it), not a replaced byte.
    const latinField = await bothWays(form([{ name: 'pid', type: 'text/plain; charset=ISO-8859-1', data: latin }]));
    expect(latinField.small).toEqual(latinField.streamed);
    expect(latinField.small).toEqual({ fields: { pid: e.toString('hex') }, streamed: null });
  });

  it('leaves unusual bodies to the streaming parser, with its answer', async () => {
    const plain = form([{ name: 'pid', data: Buffer.from('p') }]);
    const unusual: Array<[string, Buffer, string?]> = [
      ['a preamble', Buffer.concat([Buffer.from('hello\r\n'), plain])],
      ['an epilogue', Buffer.concat([plain, Buffer.from('trailing words')])],
      ['no close delimiter', plain.subarray(0, plain.length - 6)],
      ['a header it does not know', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="pid"\r\nX-Note: 1\r\n\r\np\r\n--${BOUNDARY}--\r\n`)],
      ['a folded header', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data;\r\n name="pid"\r\n\r\np\r\n--${BOUNDARY}--\r\n`)],
      ['a filename* parameter', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="pid"; filename*=UTF-8''a%20b\r\n\r\np\r\n--${BOUNDARY}--\r\n`)],
      ['a charset on a field', form([{ name: 'pid', type: 'text/plain; charset=latin1', data: Buffer.from([0xe9]) }])],
      ['a parameter besides the charset', form([{ name: 'pid', type: 'text/plain; charset=utf-8; format=flowed', data: Buffer.from('p') }])],
      ['a space before the charset\'s semicolon', form([{ name: 'pid', type: 'text/plain ; charset=utf-8', data: Buffer.from('p') }])],
      ['no Content-Disposition', Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\np\r\n--${BOUNDARY}--\r\n`)],
      ['eleven parts', form(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, data: Buffer.from(String(i)) })))],
      ['a quoted boundary', form([{ name: 'pid', data: Buffer.from('p') }], 'a b'), 'multipart/form-data; boundary="a b"'],
      ['a boundary with a charset after it', plain, `multipart/form-data; boundary=${BOUNDARY}; charset=utf-8`],
      ['a quoted boundary of special characters', form([{ name: 'pid', data: Buffer.from('p') }], "a:b=c?d/(e),f"), 'multipart/form-data; boundary="a:b=c?d/(e),f"'],
      ['an unquoted boundary of token characters', form([{ name: 'pid', data: Buffer.from('p') }], "a.b_c'd+e-"), "multipart/form-data; boundary=a.b_c'd+e-"],
      ['an unquoted boundary holding "="', form([{ name: 'pid', data: Buffer.from('p') }], 'a=b'), 'multipart/form-data; boundary=a=b'],
      ['an unquoted boundary holding ":"', form([{ name: 'pid', data: Buffer.from('p') }], 'a:b'), 'multipart/form-data; boundary=a:b'],
      ['an empty body', Buffer.alloc(0)],
      // Which of two parts of one name wins is the streaming parser's matter (its events' order).
      ['a name given twice', form([{ name: 'pid', filename: 'o.bin', data: Buffer.alloc(0) }, { name: 'pid', data: Buffer.from([0]) }])],
    ];
    for (const [what, body, contentType] of unusual) {
      const { small, streamed } = await bothWays(body, contentType);
      expect(small, what).toEqual(streamed);
    }
    // Which of them the shortcut takes: the boundaries in their plain forms, no other shape above.
    expect(plainFormBoundary('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(plainFormBoundary('multipart/form-data; boundary="a:b=c?d/(e),f"')).toBe('a:b=c?d/(e),f');
    expect(plainFormBoundary("multipart/form-data; boundary=a.b_c'd+e-")).toBe("a.b_c'd+e-");
    // Unquoted, these are not token characters: busboy's reading of the parameter decides.
    expect(plainFormBoundary('multipart/form-data; boundary=a=b')).toBeUndefined();
    expect(plainFormBoundary('multipart/form-data; boundary=a:b')).toBeUndefined();
    expect(plainFormParts(Buffer.concat([Buffer.from('hello\r\n'), plain]), BOUNDARY)).toBeUndefined();
    expect(plainFormParts(unusual.at(-1)![1], BOUNDARY)).toBeUndefined();
  });

  it('gives the same answer as the streaming parser on generated and mutated forms', async () => {
    let shortcuts = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(part, { minLength: 1, maxLength: 5, selector: (p) => p.name }), fc.oneof(fc.constant([]), fc.array(mutation, { minLength: 1, maxLength: 2 })), async (parts, mutations) => {
        const body = mutations.reduce((b, m) => m(b), form(parts));
        const { small, streamed, shortcut } = await bothWays(body);
        if (shortcut) shortcuts++;
        expect(small).toEqual(streamed);
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261129) },
    );
    // Enough forms are plain (about a quarter), or the property would test the fallback alone.
    expect(shortcuts).toBeGreaterThan(RUNS / 8);
  });

  it('leaves a body larger than SMALL_BODY_BYTES to the streaming parser, unread', async () => {
    const big = form([{ name: 'object', filename: 'o', data: Buffer.alloc(SMALL_BODY_BYTES + 1, 7) }]);
    const { small, streamed } = await bothWays(big);
    expect(small).toEqual(streamed);
    expect((small as { streamed: string }).streamed.length).toBe(2 * (SMALL_BODY_BYTES + 1));
  });
});
