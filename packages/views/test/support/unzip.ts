import { crc32 } from 'node:zlib';

export interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  size: number;
  data: Buffer;
}

/**
 * A small zip reader for tests: the central directory (zip64 too) is the truth; every entry's
 * local header is checked against it, its CRC-32 verified. Stored entries only.
 */
export function unzip(zip: Buffer): Map<string, ZipEntry> {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('no end of central directory record');
  let count = zip.readUInt16LE(eocd + 10);
  let cdSize = zip.readUInt32LE(eocd + 12);
  let cdStart = zip.readUInt32LE(eocd + 16);
  if (eocd >= 20 && zip.readUInt32LE(eocd - 20) === 0x07064b50) {
    const at = Number(zip.readBigUInt64LE(eocd - 20 + 8));
    if (zip.readUInt32LE(at) !== 0x06064b50) throw new Error('bad zip64 end record');
    count = Number(zip.readBigUInt64LE(at + 32));
    cdSize = Number(zip.readBigUInt64LE(at + 40));
    cdStart = Number(zip.readBigUInt64LE(at + 48));
  }
  const entries = new Map<string, ZipEntry>();
  let p = cdStart;
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`bad central directory entry ${n}`);
    const flags = zip.readUInt16LE(p + 8);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    let size = zip.readUInt32LE(p + 24);
    let csize = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    let offset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLen).toString(flags & 0x800 ? 'utf8' : 'latin1');
    let x = p + 46 + nameLen;
    const end = x + extraLen;
    while (x < end) {
      const id = zip.readUInt16LE(x);
      const len = zip.readUInt16LE(x + 2);
      if (id === 1) {
        let y = x + 4;
        if (size === 0xffffffff) (size = Number(zip.readBigUInt64LE(y))), (y += 8);
        if (csize === 0xffffffff) (csize = Number(zip.readBigUInt64LE(y))), (y += 8);
        if (offset === 0xffffffff) offset = Number(zip.readBigUInt64LE(y));
      }
      x += 4 + len;
    }
    if (zip.readUInt32LE(offset) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const lNameLen = zip.readUInt16LE(offset + 26);
    const lExtraLen = zip.readUInt16LE(offset + 28);
    const lName = zip.subarray(offset + 30, offset + 30 + lNameLen).toString('utf8');
    if (lName !== name) throw new Error(`local name ${lName} differs from central ${name}`);
    const start = offset + 30 + lNameLen + lExtraLen;
    const data = zip.subarray(start, start + csize);
    if (method !== 0) throw new Error(`${name}: method ${method} (only store expected)`);
    if ((crc32(data) >>> 0) !== crc) throw new Error(`${name}: CRC mismatch`);
    if (entries.has(name)) throw new Error(`duplicate entry ${name}`);
    entries.set(name, { name, method, crc, size, data });
    p = end + commentLen;
  }
  if (p !== cdStart + cdSize) throw new Error('central directory size mismatch');
  return entries;
}
