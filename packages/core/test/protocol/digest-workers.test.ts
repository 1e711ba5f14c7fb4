// Upload digests on hashing threads (issues #19/#21): the placement of the algorithms, the
// shared-slab streams (bytes copied once, bounded memory, back-pressure), the hand-off of
// uploads past the first MiB, aborts and a thread that dies. Every digest is compared with
// node:crypto over the same bytes.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { AdapterError, type ChecksumAlgorithmName, type OpenTempOptions, type StorageAdapter, type TempWrite } from '@memberkit/types';
import { digestsOf, patternBytes } from '@memberkit/testkit';
import { receiveUpload } from '@memberkit/core';
import { DigestWorkerPool, defaultDigestThreads, placeAlgorithms } from '../../src/protocol/digest-workers.js';
import { HANDOFF_BYTES } from '../../src/protocol/upload-digests.js';

const MiB = 1 << 20;
const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

/** A store keeping temp bytes in memory (or only counting them), recording aborts; `failAfter` makes its sink fail past that many bytes. */
function memoryStore(options: { keep?: boolean; failAfter?: number } = {}) {
  const committed = new Map<string, Buffer>();
  const calls = { aborts: 0 };
  const store: StorageAdapter = {
    capabilities: { write: true, delete: true, list: false, range: true, nativeChecksums: [] },
    async stat() { return undefined; },
    async read() { return undefined; },
    async delete(key) { committed.delete(key); },
    async openTemp(o: OpenTempOptions): Promise<TempWrite> {
      const parts: Buffer[] = [];
      let bytes = 0;
      return {
        sink: new Writable({
          write(chunk: Buffer, _e, cb) {
            bytes += chunk.length;
            if (options.failAfter !== undefined && bytes > options.failAfter) return cb(new AdapterError('unavailable', 'the disk went away'));
            if (options.keep !== false) parts.push(chunk);
            cb();
          },
        }),
        async commit() {
          const key = `objects/${o.id}`;
          committed.set(key, Buffer.concat(parts));
          return key;
        },
        async abort() { calls.aborts++; },
      };
    },
  };
  return { store, committed, calls };
}

/** `bytes` in chunks whose sizes cycle through `sizes` (copies, so nothing is shared with the test). */
async function* chunked(bytes: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let i = 0;
  for (let offset = 0; offset < bytes.length; i++) {
    const n = Math.min(sizes[i % sizes.length]!, bytes.length - offset);
    yield bytes.slice(offset, offset + n);
    offset += n;
  }
}

const idle = (pool: DigestWorkerPool) => pool.describe().every((t) => t.streams === 0);
const pools: DigestWorkerPool[] = [];
function pool(options: ConstructorParameters<typeof DigestWorkerPool>[0]): DigestWorkerPool {
  const p = new DigestWorkerPool(options);
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('placement by cost', () => {
  it('two threads: MD5 alone, SHA-1 with SHA-256; three or more: one each; one: all together; none: none', () => {
    const all: ChecksumAlgorithmName[] = ['SHA-1', 'MD5', 'SHA-256'];
    const sorted = (groups: ChecksumAlgorithmName[][]) => groups.map((g) => [...g].sort()).sort((a, b) => a.length - b.length || a[0]!.localeCompare(b[0]!));
    expect(sorted(placeAlgorithms(all, 2))).toEqual([['MD5'], ['SHA-1', 'SHA-256']]);
    expect(sorted(placeAlgorithms(all, 3))).toEqual([['MD5'], ['SHA-1'], ['SHA-256']]);
    expect(sorted(placeAlgorithms(all, 8))).toEqual([['MD5'], ['SHA-1'], ['SHA-256']]);
    expect(sorted(placeAlgorithms(all, 1))).toEqual([['MD5', 'SHA-1', 'SHA-256']]);
    expect(placeAlgorithms(all, 0)).toEqual([]);
  });

  it('the default follows the cores: none on one core (hash on the main thread), else one per algorithm as far as they go', () => {
    expect([1, 2, 3, 16].map((cores) => defaultDigestThreads(cores))).toEqual([0, 2, 3, 3]);
    expect(new DigestWorkerPool({ threads: 0 }).threads).toBe(0);
    expect(() => new DigestWorkerPool({ threads: -1 })).toThrow(RangeError);
  });
});

describe('digest streams on shared slabs', () => {
  it('digests equal node:crypto for any bytes cut into any chunks (tiny slabs: many slab boundaries and reuses)', async () => {
    const p2 = pool({ threads: 2, slabBytes: 1000, slabsPerStream: 2 });
    const p3 = pool({ threads: 3, slabBytes: 777, slabsPerStream: 3 });
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 20_000 }), fc.array(fc.integer({ min: 1, max: 5_000 }), { minLength: 1, maxLength: 8 }), fc.boolean(), async (bytes, sizes, onThree) => {
        const p = onThree ? p3 : p2;
        const stream = p.open();
        let batch: Uint8Array[] = [];
        for await (const chunk of chunked(bytes, sizes)) {
          batch.push(chunk);
          // Batches of one to three chunks, as a Writable's writev hands them over.
          if (batch.length === 1 + (chunk.length % 3)) {
            await stream.write(batch);
            batch = [];
          }
        }
        await stream.write(batch);
        expect(await stream.end()).toEqual(digestsOf(bytes));
      }),
      { numRuns: 60 },
    );
    expect(idle(p2) && idle(p3)).toBe(true);
  });

  it('a writer with no free slab waits (back-pressure): memory per stream is slabsPerStream slabs', async () => {
    const p = pool({ threads: 2, slabBytes: 64 * 1024, slabsPerStream: 2 });
    const stream = p.open();
    expect(stream.write([new Uint8Array(1000)]), 'room in the first slab: no wait').toBeUndefined();
    const bytes = patternBytes(5 * 64 * 1024, 3);
    const waiting = stream.write([bytes]);
    expect(waiting, 'five slabs of bytes with two slabs per stream').toBeInstanceOf(Promise);
    await waiting;
    const expected = createHash('sha256').update(new Uint8Array(1000)).update(bytes).digest('hex');
    expect((await stream.end())['SHA-256']).toBe(expected);
  });

  it('a stream can hash a subset of the algorithms, on the threads that hold them', async () => {
    const p = pool({ threads: 2 });
    const stream = p.open(['SHA-1']);
    const bytes = patternBytes(3 * MiB + 5, 9);
    await stream.write([bytes]);
    expect(await stream.end()).toEqual({ 'SHA-1': createHash('sha1').update(bytes).digest('hex') });
  });
});

describe('receiveUpload on the hashing threads', () => {
  const SIZES = [0, 1, 4095, HANDOFF_BYTES - 1, HANDOFF_BYTES, HANDOFF_BYTES + 1, 5 * MiB + 3];
  const CHUNKINGS: ReadonlyArray<readonly number[]> = [[1], [4093], [65_537], [300_001, 17, 1_048_577]];

  it.each([2, 3, 0])('with %i threads: digests equal node:crypto for sizes 0..several MiB and chunks that do not align to slabs', async (threads) => {
    const p = pool({ threads });
    for (const size of SIZES) {
      const bytes = patternBytes(size, size + 1);
      const expected = digestsOf(bytes);
      for (const sizes of CHUNKINGS) {
        if (sizes[0] === 1 && size > 8192) continue; // one-byte chunks only where they finish quickly
        const { store, committed } = memoryStore();
        const pending = await receiveUpload(store, chunked(bytes, sizes), { digestWorkers: p });
        expect(pending.size, `${size} bytes in chunks of ${sizes.join('/')}`).toBe(size);
        expect(pending.checksums, `${size} bytes in chunks of ${sizes.join('/')}`).toEqual(expected);
        expect(committed.get(await pending.commit('x'))?.equals(bytes)).toBe(true);
      }
    }
    expect(idle(p)).toBe(true);
  });

  it('uploads up to the hand-off size never start a thread; a larger one starts them, and they hold no stream afterwards', async () => {
    const p = pool({ threads: 2 });
    const { store } = memoryStore({ keep: false });
    await receiveUpload(store, chunked(patternBytes(HANDOFF_BYTES, 1), [65_536]), { digestWorkers: p });
    expect(p.describe().map((t) => t.running)).toEqual([false, false]);
    await receiveUpload(store, chunked(patternBytes(HANDOFF_BYTES + 1, 1), [65_536]), { digestWorkers: p });
    expect(p.describe().map((t) => t.running)).toEqual([true, true]);
    expect(idle(p)).toBe(true);
  });

  it('memory stays flat on a 256 MiB upload from a fast source (the slabs are the bound)', async () => {
    const p = pool({ threads: 2 });
    const { store } = memoryStore({ keep: false });
    const block = Buffer.from(patternBytes(64 * 1024, 5));
    const rss: number[] = [];
    async function* fast(total: number): AsyncGenerator<Uint8Array> {
      for (let n = 0; n < total; n += block.length) {
        if (n % (8 * MiB) === 0) rss.push(process.memoryUsage().rss);
        yield block;
      }
    }
    await receiveUpload(store, fast(16 * MiB), { digestWorkers: p }); // threads started, slabs allocated
    const before = process.memoryUsage().rss;
    rss.length = 0;
    const total = 256 * MiB;
    const pending = await receiveUpload(store, fast(total), { digestWorkers: p });
    const md5 = createHash('md5');
    for (let n = 0; n < total; n += block.length) md5.update(block);
    expect(pending.checksums.MD5).toBe(md5.digest('hex'));
    const growth = Math.max(...rss) - before;
    expect(growth, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`).toBeLessThan(48 * MiB);
  });
});

describe('aborts release the stream in the threads and its slabs', () => {
  const big = patternBytes(4 * MiB, 11);

  it('the size limit crossed after the hand-off: invalid, temp bytes aborted, nothing held', async () => {
    const p = pool({ threads: 2 });
    const { store, calls } = memoryStore();
    await expect(receiveUpload(store, chunked(big, [65_536]), { maxBytes: 3 * MiB, digestWorkers: p })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    expect(calls.aborts).toBe(1);
    expect(p.describe().every((t) => t.running)).toBe(true);
    expect(idle(p)).toBe(true);
  });

  it("the source's own error mid-way, an abort signal mid-way and a failing storage sink: each rejects, nothing held, the next upload is right", async () => {
    const p = pool({ threads: 2 });
    const { store, calls } = memoryStore();
    const boom = new Error('source broke');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* chunked(big.subarray(0, 2 * MiB), [65_536]);
      throw boom;
    }
    await expect(receiveUpload(store, failing(), { digestWorkers: p })).rejects.toBe(boom);
    expect(idle(p)).toBe(true);

    const controller = new AbortController();
    async function* aborted(): AsyncGenerator<Uint8Array> {
      yield* chunked(big.subarray(0, 2 * MiB), [65_536]);
      controller.abort(new Error('client went away'));
      yield* chunked(big.subarray(2 * MiB), [65_536]);
    }
    await expect(receiveUpload(store, aborted(), { signal: controller.signal, digestWorkers: p })).rejects.toThrow();
    expect(idle(p)).toBe(true);

    const broken = memoryStore({ failAfter: 2 * MiB });
    await expect(receiveUpload(broken.store, chunked(big, [65_536]), { digestWorkers: p })).rejects.toSatisfy((e) => AdapterError.is(e, 'unavailable'));
    expect(broken.calls.aborts).toBe(1);
    expect(idle(p)).toBe(true);
    expect(calls.aborts).toBe(2);

    const pending = await receiveUpload(store, chunked(big, [100_003]), { digestWorkers: p });
    expect(pending.checksums).toEqual(digestsOf(big));
  });
});

describe('a hashing thread that dies', () => {
  it('fails the uploads it held with internal; small uploads beside it and the next upload (on a new thread) are right', async () => {
    const p = pool({ threads: 2 });
    const { store, calls } = memoryStore();
    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    async function* held(): AsyncGenerator<Uint8Array> {
      yield* chunked(big(3 * MiB), [65_536]);
      reached();
      await gate;
      yield* chunked(big(MiB), [65_536]);
    }
    const inFlight = receiveUpload(store, held(), { digestWorkers: p });
    const outcome = inFlight.then(() => 'resolved', (e: unknown) => e);
    await atGate;
    expect(p.describe().map((t) => t.streams)).toEqual([1, 1]);
    const small = patternBytes(200_000, 4);
    const beside = receiveUpload(store, chunked(small, [65_536]), { digestWorkers: p });

    await p.close(); // both threads end, as a crash would end them
    open();
    const err = await outcome;
    expect(AdapterError.is(err, 'internal'), String(err)).toBe(true);
    expect(calls.aborts).toBe(1);
    expect((await beside).checksums).toEqual(digestsOf(small));
    expect(p.describe().map((t) => t.running)).toEqual([false, false]);

    const next = patternBytes(3 * MiB + 7, 8);
    expect((await receiveUpload(store, chunked(next, [65_536]), { digestWorkers: p })).checksums).toEqual(digestsOf(next));
    expect(p.describe().map((t) => t.running)).toEqual([true, true]);
  });

  function big(n: number): Uint8Array {
    return patternBytes(n, n);
  }
});

describe('threads never keep the process alive', () => {
  it('a process that hashed a 3 MiB upload on the shared pool and never closed it exits on its own', () => {
    const run = spawnSync(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'hash-and-exit.ts')], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(run.error, 'the process still ran after 25 s: a thread held it').toBeUndefined();
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { running: boolean[]; checksums: Record<string, string> };
    expect(out.running).toEqual([true, true]);
    expect(out.checksums).toEqual(digestsOf(patternBytes(3 * MiB, 42)));
  });
});
