import { crc32 } from 'node:zlib';

/**
 * A streaming zip writer: entries are written as their bytes arrive (method 0, store), with
 * a data descriptor after each, so nothing is buffered or spooled and the first byte leaves
 * before any member has been read. Zip64 records are written where sizes, offsets or the
 * entry count need them (packages larger than 4 GiB, members larger than 4 GiB).
 */

const MAX32 = 0xffffffff;
const MAX16 = 0xffff;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;

interface CentralEntry {
  name: Buffer;
  crc: number;
  size: number;
  offset: number;
  dosTime: number;
  dosDate: number;
  zip64: boolean;
  descriptor: boolean;
}

function dos(date: Date): { dosTime: number; dosDate: number } {
  const y = Math.max(1980, date.getUTCFullYear());
  return {
    dosTime: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2),
    dosDate: ((y - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

function u64(buf: Buffer, value: number, at: number): void {
  buf.writeBigUInt64LE(BigInt(value), at);
}

export class ZipWriter {
  private offset = 0;
  private readonly entries: CentralEntry[] = [];
  private readonly time: { dosTime: number; dosDate: number };

  constructor(date = new Date()) {
    this.time = dos(date);
  }

  /** Bytes written so far. */
  get written(): number {
    return this.offset;
  }

  private out(b: Buffer): Buffer {
    this.offset += b.length;
    return b;
  }

  /** A small entry whose bytes are in memory: no data descriptor needed. */
  *file(name: string, data: Uint8Array): Generator<Buffer> {
    const nameBuf = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const size = data.byteLength;
    const zip64 = size >= MAX32 || this.offset >= MAX32;
    const entry: CentralEntry = { name: nameBuf, crc, size, offset: this.offset, ...this.time, zip64, descriptor: false };
    this.entries.push(entry);
    yield this.out(this.localHeader(entry, false, size >= MAX32));
    yield this.out(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  /**
   * An entry streamed from `source`. `expectedSize` (when known) decides whether the local
   * header carries a zip64 extra field; the entry's true size is whatever arrives. `onChunk`
   * sees every chunk (for checksums).
   */
  async *stream(name: string, source: AsyncIterable<Uint8Array>, expectedSize?: number, onChunk?: (chunk: Uint8Array) => void): AsyncGenerator<Buffer> {
    const nameBuf = Buffer.from(name, 'utf8');
    const large = expectedSize === undefined || expectedSize >= MAX32;
    const entry: CentralEntry = { name: nameBuf, crc: 0, size: 0, offset: this.offset, ...this.time, zip64: large, descriptor: true };
    this.entries.push(entry);
    yield this.out(this.localHeader(entry, true, large));
    let crc = 0;
    let size = 0;
    for await (const chunk of source) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      crc = crc32(b, crc);
      size += b.length;
      onChunk?.(b);
      yield this.out(b);
    }
    if (!large && size >= MAX32) throw new Error(`entry '${name}' is larger than announced (${size} bytes)`);
    entry.crc = crc;
    entry.size = size;
    // Data descriptor: 8-byte sizes when the local header announced zip64.
    const d = Buffer.alloc(large ? 24 : 16);
    d.writeUInt32LE(0x08074b50, 0);
    d.writeUInt32LE(crc >>> 0, 4);
    if (large) {
      u64(d, size, 8);
      u64(d, size, 16);
    } else {
      d.writeUInt32LE(size, 8);
      d.writeUInt32LE(size, 12);
    }
    yield this.out(d);
  }

  private localHeader(e: CentralEntry, descriptor: boolean, zip64: boolean): Buffer {
    const extraLen = zip64 ? 20 : 0;
    const h = Buffer.alloc(30 + e.name.length + extraLen);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(zip64 ? 45 : 20, 4);
    h.writeUInt16LE(FLAG_UTF8 | (descriptor ? FLAG_DESCRIPTOR : 0), 6);
    h.writeUInt16LE(0, 8); // stored
    h.writeUInt16LE(e.dosTime, 10);
    h.writeUInt16LE(e.dosDate, 12);
    h.writeUInt32LE(descriptor ? 0 : e.crc >>> 0, 14);
    h.writeUInt32LE(zip64 ? MAX32 : descriptor ? 0 : e.size, 18);
    h.writeUInt32LE(zip64 ? MAX32 : descriptor ? 0 : e.size, 22);
    h.writeUInt16LE(e.name.length, 26);
    h.writeUInt16LE(extraLen, 28);
    e.name.copy(h, 30);
    if (zip64) {
      const x = 30 + e.name.length;
      h.writeUInt16LE(0x0001, x);
      h.writeUInt16LE(16, x + 2);
      u64(h, descriptor ? 0 : e.size, x + 4);
      u64(h, descriptor ? 0 : e.size, x + 12);
    }
    return h;
  }

  /** The central directory and end records. */
  *finish(): Generator<Buffer> {
    const cdStart = this.offset;
    for (const e of this.entries) {
      const needSize = e.size >= MAX32;
      const needOffset = e.offset >= MAX32;
      // Entries whose local header carried zip64 keep zip64 sizes in the central directory too.
      const sizes64 = needSize || e.zip64;
      const extraLen = sizes64 || needOffset ? 4 + (sizes64 ? 16 : 0) + (needOffset ? 8 : 0) : 0;
      const h = Buffer.alloc(46 + e.name.length + extraLen);
      h.writeUInt32LE(0x02014b50, 0);
      h.writeUInt16LE((3 << 8) | 45, 4); // made by: Unix, 4.5
      h.writeUInt16LE(extraLen ? 45 : 20, 6);
      h.writeUInt16LE(FLAG_UTF8 | (e.descriptor ? FLAG_DESCRIPTOR : 0), 8);
      h.writeUInt16LE(0, 10);
      h.writeUInt16LE(e.dosTime, 12);
      h.writeUInt16LE(e.dosDate, 14);
      h.writeUInt32LE(e.crc >>> 0, 16);
      h.writeUInt32LE(sizes64 ? MAX32 : e.size, 20);
      h.writeUInt32LE(sizes64 ? MAX32 : e.size, 24);
      h.writeUInt16LE(e.name.length, 28);
      h.writeUInt16LE(extraLen, 30);
      h.writeUInt16LE(0, 32); // comment
      h.writeUInt16LE(0, 34); // disk
      h.writeUInt16LE(0, 36); // internal attrs
      h.writeUInt32LE((0o100644 << 16) >>> 0, 38); // regular file, rw-r--r--
      h.writeUInt32LE(needOffset ? MAX32 : e.offset, 42);
      e.name.copy(h, 46);
      if (extraLen) {
        let x = 46 + e.name.length;
        h.writeUInt16LE(0x0001, x);
        h.writeUInt16LE(extraLen - 4, x + 2);
        x += 4;
        if (sizes64) {
          u64(h, e.size, x);
          u64(h, e.size, x + 8);
          x += 16;
        }
        if (needOffset) u64(h, e.offset, x);
      }
      yield this.out(h);
    }
    const cdSize = this.offset - cdStart;
    const count = this.entries.length;
    if (count >= MAX16 || cdStart >= MAX32 || cdSize >= MAX32) {
      const z = Buffer.alloc(56);
      const eocd64At = this.offset;
      z.writeUInt32LE(0x06064b50, 0);
      u64(z, 44, 4);
      z.writeUInt16LE(45, 12);
      z.writeUInt16LE(45, 14);
      z.writeUInt32LE(0, 16);
      z.writeUInt32LE(0, 20);
      u64(z, count, 24);
      u64(z, count, 32);
      u64(z, cdSize, 40);
      u64(z, cdStart, 48);
      yield this.out(z);
      const l = Buffer.alloc(20);
      l.writeUInt32LE(0x07064b50, 0);
      l.writeUInt32LE(0, 4);
      u64(l, eocd64At, 8);
      l.writeUInt32LE(1, 16);
      yield this.out(l);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(Math.min(count, MAX16), 8);
    end.writeUInt16LE(Math.min(count, MAX16), 10);
    end.writeUInt32LE(Math.min(cdSize, MAX32), 12);
    end.writeUInt32LE(Math.min(cdStart, MAX32), 16);
    yield this.out(end);
  }
}
