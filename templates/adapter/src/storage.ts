import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AdapterError,
  CHECKSUM_ALGORITHMS,
  createChecksumHash,
  type ByteRange,
  type ChecksumAlgorithmName,
  type PendingWrite,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageEntry,
  type StorageKey,
  type StorageReadResult,
  type StorageStat,
  type WriteOptions,
} from '@memberkit/types';

/**
 * Options of the storage adapter. YOUR BACKEND: replace these with what your store needs
 * (a root directory, a bucket and credentials, a connection string...). Keep secrets out of
 * logs and error messages.
 */
export interface TemplateStorageOptions {
  /** Prefix of every key this instance creates. Default `objects/`. */
  keyPrefix?: string;
}

/** One object as the backend keeps it. YOUR BACKEND: your store keeps this, not a Map. */
interface StoredBytes {
  bytes: Buffer;
  modified: Date;
  checksums: Record<ChecksumAlgorithmName, string>;
}

/**
 * Where object bytes live, by opaque storage key (StorageAdapter in @memberkit/types).
 *
 * This starting point keeps the bytes in memory: it is complete (every capability
 * declared, so the testkit runs every storage test) and small, so each method shows what
 * the contract asks for. Every place that touches the in-memory Map is marked
 * `YOUR BACKEND:`; replace those with calls to your archive and keep the rest.
 *
 * Contract reminders (the TSDoc of StorageAdapter is normative):
 * - no I/O in the constructor; connect in `open`, disconnect in `close`;
 * - absent keys are `undefined` on stat/read, never an error;
 * - keys are opaque and derived from the PID (hashed), never the raw PID;
 * - only `AdapterError` with a kind leaves this class (the core maps kinds to DataONE
 *   exceptions); a source's own error during `write` is rethrown as is.
 */
export class TemplateStorageAdapter implements StorageAdapter {
  /**
   * A declared capability is an obligation: the testkit runs its tests and the core relies
   * on it. Turn off what your backend cannot do (and remove the method, or make it throw
   * AdapterError 'unsupported'): e.g. a read-only archive declares write/delete false.
   */
  readonly capabilities: StorageCapabilities = {
    write: true,
    delete: true,
    list: true,
    range: true,
    // Digests known without reading the bytes (here: computed during write and kept).
    nativeChecksums: ['MD5', 'SHA-1', 'SHA-256'],
  };

  private readonly keyPrefix: string;
  // YOUR BACKEND: the handle of your store (a client, a pool, a directory). Created in open().
  private objects: Map<StorageKey, StoredBytes> | undefined;

  constructor(options: TemplateStorageOptions = {}) {
    // No I/O here: only remember the options.
    this.keyPrefix = options.keyPrefix ?? 'objects/';
  }

  async open(): Promise<void> {
    // YOUR BACKEND: connect, check that the bucket/directory/schema exists, sweep crash leftovers.
    this.objects ??= new Map();
  }

  async close(): Promise<void> {
    // YOUR BACKEND: release connections. In memory, the bytes go with the instance.
    this.objects = undefined;
  }

  async stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageStat | undefined> {
    options?.signal?.throwIfAborted();
    // YOUR BACKEND: a HEAD/stat of `key`; `undefined` when absent. Refuse keys that would
    // escape your root (`..`, absolute paths) with AdapterError 'invalid' (or treat them as absent).
    const stored = this.store().get(key);
    if (stored === undefined) return undefined;
    return { size: stored.bytes.byteLength, modified: new Date(stored.modified), checksums: { ...stored.checksums } };
  }

  async read(key: StorageKey, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<StorageReadResult | undefined> {
    options?.signal?.throwIfAborted();
    // YOUR BACKEND: open a stream of the bytes (or of the range); `undefined` when absent.
    // Never read a large object into memory: return the backend's stream.
    const stored = this.store().get(key);
    if (stored === undefined) return undefined;
    const size = stored.bytes.byteLength;
    const range = options?.range;
    let start = 0;
    let end = size - 1;
    if (range) {
      // "A range past the end throws kind 'invalid'."
      if (!Number.isSafeInteger(range.start) || range.start < 0 || range.start >= size) {
        throw new AdapterError('invalid', `range starts at ${range.start}, past the end of a ${size}-byte object`);
      }
      start = range.start;
      if (range.end !== undefined) {
        if (!Number.isSafeInteger(range.end) || range.end < start) throw new AdapterError('invalid', 'range end before its start');
        end = Math.min(range.end, size - 1);
      }
    }
    const slice = stored.bytes.subarray(start, end + 1);
    const stream = Readable.from(chunks(slice), { objectMode: false });
    if (options?.signal) options.signal.addEventListener('abort', () => stream.destroy(options.signal?.reason), { once: true });
    return { stream, length: slice.byteLength, size };
  }

  async write(source: AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<PendingWrite> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    // Hash while the bytes flow: the core compares these digests with the system metadata.
    const hashes = CHECKSUM_ALGORITHMS.map((algorithm) => [algorithm, createChecksumHash(algorithm)] as const);
    // YOUR BACKEND: open a temporary object (a temp file, an S3 multipart upload, a staging
    // row) instead of collecting chunks; it MUST stay invisible until commit.
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of source) {
        signal?.throwIfAborted();
        size += chunk.byteLength;
        if (options?.maxBytes !== undefined && size > options.maxBytes) {
          throw new AdapterError('invalid', `the object is larger than the limit of ${options.maxBytes} bytes`);
        }
        for (const [, hash] of hashes) hash.update(chunk);
        // YOUR BACKEND: append the chunk to the temporary object (await its write).
        parts.push(Buffer.from(chunk));
      }
      signal?.throwIfAborted();
    } catch (e) {
      // YOUR BACKEND: remove the temporary object, then rethrow the error as it is.
      parts.length = 0;
      throw e;
    }
    const checksums = Object.fromEntries(hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')])) as Record<ChecksumAlgorithmName, string>;
    return new TemplatePendingWrite(this, Buffer.concat(parts, size), checksums);
  }

  async delete(key: StorageKey, options?: { signal?: AbortSignal }): Promise<void> {
    options?.signal?.throwIfAborted();
    // YOUR BACKEND: remove the bytes at `key`; an absent key is not an error.
    this.store().delete(key);
  }

  async *list(options?: { prefix?: string; signal?: AbortSignal }): AsyncIterable<StorageEntry> {
    const prefix = options?.prefix ?? '';
    // YOUR BACKEND: page through your store (ListObjectsV2, a directory walk, a cursor) in
    // constant memory; yield each key once.
    for (const [key, stored] of [...this.store()]) {
      options?.signal?.throwIfAborted();
      if (key.startsWith(prefix)) yield { key, size: stored.bytes.byteLength, modified: new Date(stored.modified) };
    }
  }

  /** @internal Makes a finished write visible under a fresh key; called by PendingWrite.commit. */
  async commitBytes(name: string, bytes: Buffer, checksums: Record<ChecksumAlgorithmName, string>, signal?: AbortSignal): Promise<StorageKey> {
    signal?.throwIfAborted();
    // "Each commit MUST produce a key no other write produced": the PID is hashed (never
    // used as a path as is) and a random suffix makes every commit's key its own.
    const hash = createHash('sha256').update(name, 'utf8').digest('hex');
    const key = `${this.keyPrefix}${hash.slice(0, 2)}/${hash}-${randomBytes(8).toString('hex')}`;
    const objects = this.store();
    if (objects.has(key)) throw new AdapterError('already-exists', 'storage key collision');
    // YOUR BACKEND: move the temporary object to `key` (rename, CopyObject, commit the
    // staging row) and make it durable (fsync or the backend's equivalent) before returning.
    objects.set(key, { bytes, modified: new Date(), checksums });
    return key;
  }

  private store(): Map<StorageKey, StoredBytes> {
    // YOUR BACKEND: map "not opened" or "connection lost" to 'unavailable' like this.
    if (this.objects === undefined) throw new AdapterError('unavailable', 'the storage adapter is not open');
    return this.objects;
  }
}

class TemplatePendingWrite implements PendingWrite {
  private state: 'pending' | 'committed' | 'aborted' = 'pending';
  private key: StorageKey | undefined;

  constructor(
    private readonly storage: TemplateStorageAdapter,
    private bytes: Buffer,
    private readonly digests: Record<ChecksumAlgorithmName, string>,
  ) {}

  get size(): number {
    return this.bytes.byteLength;
  }

  get checksums(): Readonly<Record<ChecksumAlgorithmName, string>> {
    return this.digests;
  }

  async commit(name: string, options?: { signal?: AbortSignal }): Promise<StorageKey> {
    if (this.state === 'committed') return this.key!;
    if (this.state === 'aborted') throw new AdapterError('invalid', 'this write was aborted');
    this.key = await this.storage.commitBytes(name, this.bytes, { ...this.digests }, options?.signal);
    this.state = 'committed';
    return this.key;
  }

  async abort(): Promise<void> {
    // Idempotent, and a no-op after commit (the committed bytes belong to the caller now).
    if (this.state !== 'pending') return;
    this.state = 'aborted';
    // YOUR BACKEND: remove the temporary object (ignore "already gone").
    this.bytes = Buffer.alloc(0);
  }
}

/** The bytes in 64 KiB chunks, so a reader sees a stream like a real backend's. */
function* chunks(bytes: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < bytes.byteLength; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
}

/** A storage adapter (call `open()` before use, or let the node open it). */
export function createTemplateStorage(options: TemplateStorageOptions = {}): TemplateStorageAdapter {
  return new TemplateStorageAdapter(options);
}
