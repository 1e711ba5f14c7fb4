/**
 * The first bytes of a file as text, for sniffing: BOM and UTF-16 handled, never more than
 * `HEAD_BYTES` read, never throws. Binary content is told apart so that no rule for text
 * runs over it.
 */

/** How many leading bytes identification looks at (callers read at most this much). */
export const HEAD_BYTES = 8192;

export interface HeadText {
  /** The decoded text ('' for binary content). */
  text: string;
  /** True when the bytes look like text (no NUL, few control characters). */
  isText: boolean;
  /** True when the head ends before the file does (the last line may be cut). */
  truncated: boolean;
}

export function headText(head: Uint8Array, fileSize?: number): HeadText {
  const bytes = head.length > HEAD_BYTES ? head.subarray(0, HEAD_BYTES) : head;
  const truncated = fileSize !== undefined ? fileSize > bytes.length : head.length >= HEAD_BYTES;
  const encoding = sniffEncoding(bytes);
  if (encoding === undefined) return { text: '', isText: false, truncated };
  const start = encoding.bom;
  // A NUL byte decodes to U+0000, which looksLikeText refuses: binary, told without decoding
  // (most binary heads hold one; decoding 8 KiB of them was a scan's largest cost per file).
  if (encoding.name === 'utf-8' && bytes.indexOf(0, start) !== -1) return { text: '', isText: false, truncated };
  let text: string;
  try {
    text = new TextDecoder(encoding.name, { fatal: false }).decode(bytes.subarray(start));
  } catch {
    return { text: '', isText: false, truncated };
  }
  return { text, isText: looksLikeText(text), truncated };
}

function sniffEncoding(b: Uint8Array): { name: 'utf-8' | 'utf-16le' | 'utf-16be'; bom: number } | undefined {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { name: 'utf-8', bom: 3 };
  // FF FE 00 00 is a UTF-32 BOM: not handled, taken for binary.
  if (b[0] === 0xff && b[1] === 0xfe) return b[2] === 0 && b[3] === 0 ? undefined : { name: 'utf-16le', bom: 2 };
  if (b[0] === 0xfe && b[1] === 0xff) return { name: 'utf-16be', bom: 2 };
  // UTF-16 without a BOM: an ASCII character then a zero byte (or the reverse), twice.
  if (b.length >= 4 && b[0] !== 0 && b[1] === 0 && b[2] !== 0 && b[3] === 0) return { name: 'utf-16le', bom: 0 };
  if (b.length >= 4 && b[0] === 0 && b[1] !== 0 && b[2] === 0 && b[3] !== 0) return { name: 'utf-16be', bom: 0 };
  return { name: 'utf-8', bom: 0 };
}

/** No NUL and under 1% control characters (other than tab, newlines, form feed, escape). */
function looksLikeText(s: string): boolean {
  let controls = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return false;
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 27) || c === 0x7f) controls++;
  }
  return controls * 100 <= s.length;
}
