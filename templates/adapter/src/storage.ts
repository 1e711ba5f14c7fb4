import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import {
  AdapterError,
  type ByteRange,
  type OpenTempOptions,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageEntry,
  type StorageKey,
  type StorageReadResult,
  type StorageStat,
  type TempWrite,
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
 *   exceptions);
 * - writes: the core hashes, counts and limits the bytes and keeps the pending-write state;
 *   `openTemp` only offers a temporary place (a sink), `commit` and `abort`.
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
    // Off: the core reads from the start and skips to the range.
    range: true,
    // Digests your store knows without reading the bytes (S3's ETag: MD5). None here: the
    // core computes a digest when it needs one.
    nativeChecksums: [],
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
    return { size: stored.bytes.byteLength, modified: new Date(stored.modified) };
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

  async openTemp(options: OpenTempOptions): Promise<TempWrite> {
    options.signal?.throwIfAborted();
    // YOUR BACKEND: open a temporary object (a temp file, an S3 multipart upload, a staging
    // row); it MUST stay invisible until commit. The sink receives the bytes in order and
    // MUST have made them durable in the temporary area before it finishes.
    let parts: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        // YOUR BACKEND: append the chunk to the temporary object, then call back.
        parts.push(Buffer.from(chunk));
        callback();
      },
    });
    return {
      sink,
      commit: (name, o) => this.commitBytes(name, options.id, Buffer.concat(parts), o?.signal),
      abort: async () => {
        // YOUR BACKEND: remove the temporary object (ignore "already gone").
        parts = [];
      },
    };
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

  /** Makes a finished write visible under the key of this write. */
  private async commitBytes(name: string, id: string, bytes: Buffer, signal?: AbortSignal): Promise<StorageKey> {
    signal?.throwIfAborted();
    // The key MUST be unique to the write: the PID is hashed (never used as a path as is)
    // and the write's id (drawn by the core) makes every commit's key its own.
    const hash = createHash('sha256').update(name, 'utf8').digest('hex');
    const key = `${this.keyPrefix}${hash.slice(0, 2)}/${hash}-${id}`;
    const objects = this.store();
    if (objects.has(key)) throw new AdapterError('already-exists', 'storage key collision');
    // YOUR BACKEND: move the temporary object to `key` (rename, complete the upload, commit
    // the staging row) and make it durable before returning.
    objects.set(key, { bytes, modified: new Date() });
    return key;
  }

  private store(): Map<StorageKey, StoredBytes> {
    // YOUR BACKEND: map "not opened" or "connection lost" to 'unavailable' like this.
    if (this.objects === undefined) throw new AdapterError('unavailable', 'the storage adapter is not open');
    return this.objects;
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
