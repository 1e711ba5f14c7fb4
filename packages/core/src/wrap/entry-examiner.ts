import { posix } from 'node:path';
import type { ChecksumAlgorithmName, StorageEntry } from '@memberkit/types';
import { digestWithHead, HEAD_BYTES, type FormatIdentification, type FormatRules } from '@memberkit/science';
import type { WrapStorage } from './wrap-storage.js';

/** A listed entry's checksum and format, as read now. */
export interface Examined {
  checksum: string;
  format: FormatIdentification;
  /** Bytes read to compute the checksum (0 when the storage knew it). */
  bytesRead: number;
  /** The checksum came from the storage without reading (native). */
  native: boolean;
}

/**
 * Checksums and formats of listed entries, through the storage's port only: a native
 * checksum when the storage has one (listing, then `stat`), else the storage's own `digest`,
 * else a plain `read`. Undefined when the entry vanished or changed while being read.
 */
export class EntryExaminer {
  constructor(
    private readonly storage: WrapStorage,
    private readonly algorithm: ChecksumAlgorithmName,
    private readonly formats: FormatRules,
  ) {}

  async examine(entry: StorageEntry, signal: AbortSignal | undefined, known?: string): Promise<Examined | undefined> {
    const opts = signal ? { signal } : {};
    let mediaType: string | undefined;
    let checksum = known ?? entry.checksums?.[this.algorithm];
    let native = known === undefined && checksum !== undefined;
    if (checksum === undefined && this.storage.capabilities.nativeChecksums.includes(this.algorithm)) {
      const stat = await this.storage.stat(entry.key, opts);
      if (stat === undefined) return undefined;
      mediaType = stat.mediaType;
      const value = stat.checksums?.[this.algorithm];
      if (value !== undefined && stat.size === entry.size) {
        checksum = value;
        native = true;
      }
    }
    if (checksum !== undefined) {
      return { checksum, native, bytesRead: 0, format: await this.identify(entry, undefined, mediaType, signal) };
    }
    if (this.storage.digest) {
      const d = await this.storage.digest(entry.key, this.algorithm, { ...opts, expected: entry, ...(this.needsHead(entry) ? { headBytes: HEAD_BYTES } : {}) });
      if (d === undefined || d.size !== entry.size || (entry.version !== undefined && d.version !== undefined && d.version !== entry.version)) return undefined;
      return { checksum: d.checksum, native: false, bytesRead: d.size, format: await this.identify(entry, d.head, d.mediaType ?? mediaType, signal) };
    }
    const read = await this.storage.read(entry.key, opts);
    if (read === undefined) return undefined;
    const d = await digestWithHead(read.stream, this.algorithm);
    if (d.size !== entry.size) return undefined;
    return { checksum: d.checksum, native: false, bytesRead: d.size, format: await this.identify(entry, d.head, mediaType, signal) };
  }

  /** The entry's format: its override, else from its first bytes (read only when the name does not settle it). */
  private async identify(entry: StorageEntry, head: Uint8Array | undefined, mediaType: string | undefined, signal: AbortSignal | undefined): Promise<FormatIdentification> {
    let bytes = head ?? new Uint8Array();
    if (head === undefined && this.needsHead(entry)) {
      try {
        bytes = await this.readHead(entry.key, signal);
      } catch (e) {
        if (signal?.aborted) throw e;
        // Unreadable head: the name (and media type) decide; hashing reports real read errors.
      }
    }
    return this.formats.identify(entry.key, { name: posix.basename(entry.key), head: bytes, size: entry.size, ...(mediaType && !isGeneric(mediaType) ? { mediaType } : {}) });
  }

  /** Whether identification reads the entry's first bytes (its name does not settle the format). */
  private needsHead(entry: StorageEntry): boolean {
    return entry.size > 0 && this.formats.needsContent(entry.key);
  }

  private async readHead(key: string, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const read = await this.storage.read(key, { ...(this.storage.capabilities.range ? { range: { start: 0, end: HEAD_BYTES - 1 } } : {}), ...(signal ? { signal } : {}) });
    if (read === undefined) return new Uint8Array();
    const chunks: Buffer[] = [];
    let length = 0;
    try {
      for await (const chunk of read.stream) {
        chunks.push(chunk as Buffer);
        length += (chunk as Buffer).length;
        if (length >= HEAD_BYTES) break;
      }
    } finally {
      read.stream.destroy();
    }
    return new Uint8Array(Buffer.concat(chunks).subarray(0, HEAD_BYTES));
  }
}

/** Content-Types that say nothing about the format (S3 defaults). */
function isGeneric(mediaType: string): boolean {
  const m = mediaType.split(';')[0]!.trim().toLowerCase();
  return m === 'application/octet-stream' || m === 'binary/octet-stream' || m === '';
}
