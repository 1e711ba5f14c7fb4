/** A minimal DER reader: enough to walk a certificate's names and extensions. */
export interface Tlv {
  tag: number;
  /** The whole element (tag, length, contents). */
  raw: Uint8Array;
  /** The contents. */
  value: Uint8Array;
}

export function readTlv(buf: Uint8Array, offset = 0): Tlv & { end: number } {
  if (offset + 2 > buf.length) throw new Error('truncated DER');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new Error('multi-byte DER tags are not supported');
  let len = buf[offset + 1]!;
  let pos = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('unsupported DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[pos++]!;
  }
  const end = pos + len;
  if (end > buf.length) throw new Error('truncated DER');
  return { tag, raw: buf.subarray(offset, end), value: buf.subarray(pos, end), end };
}

/** The elements inside a constructed element's contents. */
export function children(value: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  let pos = 0;
  while (pos < value.length) {
    const t = readTlv(value, pos);
    out.push(t);
    pos = t.end;
  }
  return out;
}

export function decodeOid(value: Uint8Array): string {
  const parts: number[] = [];
  let n = 0;
  for (const b of value) {
    n = n * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (parts.length === 0) {
        const first = n < 80 ? Math.floor(n / 40) : 2;
        parts.push(first, n - first * 40);
      } else parts.push(n);
      n = 0;
    }
  }
  return parts.join('.');
}

/** A string-typed element as text, or undefined for other types. */
export function decodeString(t: Tlv): string | undefined {
  switch (t.tag) {
    case 0x0c: // UTF8String
      return new TextDecoder('utf-8', { fatal: true }).decode(t.value);
    case 0x13: // PrintableString
    case 0x16: // IA5String
    case 0x12: // NumericString
    case 0x1a: // VisibleString
      return Buffer.from(t.value).toString('latin1');
    case 0x14: // TeletexString (T.61), read as Latin-1 like most implementations
      return Buffer.from(t.value).toString('latin1');
    case 0x1e: {
      // BMPString: UTF-16BE
      const swapped = Buffer.from(t.value);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    case 0x1c: {
      // UniversalString: UTF-32BE
      let s = '';
      for (let i = 0; i + 3 < t.value.length; i += 4) s += String.fromCodePoint(((t.value[i]! << 24) | (t.value[i + 1]! << 16) | (t.value[i + 2]! << 8) | t.value[i + 3]!) >>> 0);
      return s;
    }
    default:
      return undefined;
  }
}
