import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { expect, type TestContext } from 'vitest';
import { AdapterError, CHECKSUM_ALGORITHMS, type StorageAdapter, type StorageEntry, type StorageKey, type StorageReadResult, type TempWrite } from '@memberkit/types';
import { expectAdapterError, describeError } from './adapter-errors.js';
import { bytesSource, Digester, digestsOf, digestStream, generatedSource, patternBytes, readAll } from './bytes.js';
import { HOSTILE_IDENTIFIERS, HOSTILE_STORAGE_KEYS } from './fixtures.js';
import { defineSuite, requireCapability } from './harness.js';
import type { StorageSuiteContext, SuiteOptions } from './suite-context.js';

const MiB = 1024 * 1024;

/**
 * The StorageAdapter conformance suite (contract: `StorageAdapter` in @memberkit/types).
 * Tests are picked by the instance's declared capabilities: a declared capability is an
 * obligation and its tests run; an undeclared one is asserted absent or refused with
 * AdapterError 'unsupported', and its tests are reported as skipped. Read tests run on
 * bytes written through `openTemp` + `commit` (capabilities.write) or put there by `ctx.seed`.
 * The core hashes, counts and limits uploads and keeps the pending-write state; this suite
 * checks what an adapter offers: temporary bytes, commit and abort (TempWrite).
 */
export function runStorageAdapterSuite(name: string, ctx: StorageSuiteContext, options?: SuiteOptions): void {
  let seq = 0;

  /** Make `bytes` readable and return their key: via write + commit, or via ctx.seed. */
  async function put(adapter: StorageAdapter, bytes: Uint8Array, label = 'object'): Promise<StorageKey> {
    const n = ++seq;
    if (adapter.capabilities.write) {
      const temp = await spool(adapter, bytesSource(bytes));
      return temp.commit(`testkit:${label}/${n}`);
    }
    if (ctx.seed) return ctx.seed(adapter, `seed/${n}/${label}.bin`, bytes);
    throw new Error('testkit: a read-only StorageAdapter (capabilities.write false) needs StorageSuiteContext.seed to put test data in place');
  }

  /** A key of the adapter's own shape that holds nothing. */
  async function absentKey(adapter: StorageAdapter): Promise<StorageKey> {
    const key = await put(adapter, patternBytes(10, 99), 'absent');
    if (adapter.capabilities.write && adapter.delete) {
      await adapter.delete(key);
      return key;
    }
    return `${key}.absent`;
  }

  async function listed(adapter: StorageAdapter, prefix?: string): Promise<Map<StorageKey, StorageEntry>> {
    const out = new Map<StorageKey, StorageEntry>();
    for await (const entry of adapter.list!(prefix === undefined ? {} : { prefix })) {
      expect(out.has(entry.key), `list MUST yield each key once (${entry.key})`).toBe(false);
      out.set(entry.key, entry);
    }
    return out;
  }

  /** Keys listed now that were not listed in `before` (empty when list is not declared). */
  async function newKeys(adapter: StorageAdapter, before: ReadonlySet<StorageKey>): Promise<StorageKey[]> {
    if (!adapter.capabilities.list) return [];
    return [...(await listed(adapter)).keys()].filter((k) => !before.has(k));
  }

  async function listedKeys(adapter: StorageAdapter): Promise<Set<StorageKey>> {
    return adapter.capabilities.list ? new Set((await listed(adapter)).keys()) : new Set();
  }

  async function readBytes(adapter: StorageAdapter, key: StorageKey, range?: { start: number; end?: number }): Promise<{ result: StorageReadResult; bytes: Buffer }> {
    const result = await adapter.read(key, range ? { range } : undefined);
    expect(result, `read(${JSON.stringify(key)}) MUST find the bytes`).toBeDefined();
    const bytes = await readAll(result!.stream);
    return { result: result!, bytes };
  }

/**
   * What the core does with an upload, without the hashing: a fresh write id, the bytes
   * through the adapter's sink, and the TempWrite back (aborted when the bytes failed).
   */
  async function spool(adapter: StorageAdapter, source: AsyncIterable<Uint8Array>, options: { signal?: AbortSignal } = {}): Promise<TempWrite & { id: string }> {
    expect(adapter.openTemp, 'capabilities.write is true, so openTemp MUST be implemented').toBeTypeOf('function');
    const id = randomBytes(16).toString('hex');
    const temp = await adapter.openTemp!({ id, ...options });
    try {
      await pipeline(source, temp.sink, options.signal ? { signal: options.signal } : {});
    } catch (e) {
      await temp.abort();
      throw e;
    }
    return { sink: temp.sink, commit: temp.commit.bind(temp), abort: temp.abort.bind(temp), id };
  }

  const needWrite = (tc: TestContext, a: StorageAdapter): void => requireCapability(tc, a.capabilities.write, 'capabilities.write is false');
  const needDelete = (tc: TestContext, a: StorageAdapter): void => requireCapability(tc, a.capabilities.delete, 'capabilities.delete is false');
  const needList = (tc: TestContext, a: StorageAdapter): void => requireCapability(tc, a.capabilities.list, 'capabilities.list is false');
  const needRange = (tc: TestContext, a: StorageAdapter): void => requireCapability(tc, a.capabilities.range, 'capabilities.range is false');

  defineSuite<StorageAdapter>(`StorageAdapter conformance: ${name}`, ctx, options, (h) => {
    h.group('capabilities', () => {
      h.test('declares a complete capabilities object', async (a) => {
        const c = a.capabilities;
        expect(c).toBeTypeOf('object');
        for (const flag of ['write', 'delete', 'list', 'range'] as const) expect(c[flag], `capabilities.${flag}`).toBeTypeOf('boolean');
        expect(Array.isArray(c.nativeChecksums), 'capabilities.nativeChecksums is an array').toBe(true);
        for (const alg of c.nativeChecksums) expect(CHECKSUM_ALGORITHMS).toContain(alg);
      });

      h.test('implements every declared capability', async (a) => {
        const c = a.capabilities;
        expect(a.stat).toBeTypeOf('function');
        expect(a.read).toBeTypeOf('function');
        if (c.write) {
          expect(a.openTemp, 'capabilities.write: openTemp').toBeTypeOf('function');
          // "`openTemp` and `delete` are implemented (managed mode)."
          expect(c.delete, 'capabilities.write implies capabilities.delete').toBe(true);
        }
        if (c.delete) expect(a.delete, 'capabilities.delete: delete').toBeTypeOf('function');
        if (c.list) expect(a.list, 'capabilities.list: list').toBeTypeOf('function');
      });

      h.test('openTemp is absent or refused with unsupported when not declared', async (a, tc) => {
        requireCapability(tc, !a.capabilities.write, 'capabilities.write is true');
        if (a.openTemp === undefined) return;
        await expectAdapterError(() => a.openTemp!({ id: randomBytes(16).toString('hex') }), 'unsupported', 'openTemp on an adapter without capabilities.write');
      });

      h.test('delete is absent or refused with unsupported when not declared', async (a, tc) => {
        requireCapability(tc, !a.capabilities.delete, 'capabilities.delete is true');
        if (a.delete === undefined) return;
        const key = await put(a, patternBytes(10), 'undeletable');
        await expectAdapterError(() => a.delete!(key), 'unsupported', 'delete on an adapter without capabilities.delete');
        const s = await a.stat(key);
        expect(s, 'a refused delete leaves the bytes').toBeDefined();
      });

      h.test('list is absent or refused with unsupported when not declared', async (a, tc) => {
        requireCapability(tc, !a.capabilities.list, 'capabilities.list is true');
        if (a.list === undefined) return;
        await expectAdapterError(async () => {
          for await (const _ of a.list!()) { /* drain */ }
        }, 'unsupported', 'list on an adapter without capabilities.list');
      });
    });

    h.group('stat and read', () => {
      h.test('stat of an absent key is undefined', async (a) => {
        expect(await a.stat(await absentKey(a))).toBeUndefined();
      });

      h.test('read of an absent key is undefined', async (a) => {
        expect(await a.read(await absentKey(a))).toBeUndefined();
      });

      h.test('stat reports size and modification date', async (a) => {
        const key = await put(a, patternBytes(1000));
        const s = await a.stat(key);
        expect(s).toBeDefined();
        expect(s!.size).toBe(1000);
        expect(s!.modified).toBeInstanceOf(Date);
        expect(Number.isNaN(s!.modified.getTime()), 'modified is a valid Date').toBe(false);
      });

      h.test('stat reports every declared native checksum', async (a, tc) => {
        requireCapability(tc, a.capabilities.nativeChecksums.length > 0, 'capabilities.nativeChecksums is empty');
        const bytes = patternBytes(4321, 3);
        const key = await put(a, bytes);
        const expected = digestsOf(bytes);
        const s = await a.stat(key);
        for (const alg of a.capabilities.nativeChecksums) {
          expect(s?.checksums?.[alg]?.toLowerCase(), `stat().checksums['${alg}']`).toBe(expected[alg]);
        }
      });

      h.test('read returns the whole object with its length and size', async (a) => {
        const bytes = patternBytes(5000, 4);
        const key = await put(a, bytes);
        const { result, bytes: got } = await readBytes(a, key);
        expect(result.length).toBe(5000);
        expect(result.size).toBe(5000);
        expect(Buffer.compare(got, Buffer.from(bytes))).toBe(0);
      });

      h.test('reads an empty object', async (a) => {
        const key = await put(a, new Uint8Array(0), 'empty');
        expect((await a.stat(key))?.size).toBe(0);
        const { result, bytes } = await readBytes(a, key);
        expect(result.length).toBe(0);
        expect(result.size).toBe(0);
        expect(bytes.length).toBe(0);
      });

      h.test('reads an 8 MiB object as a stream', async (a) => {
        const bytes = patternBytes(8 * MiB, 5);
        const key = await put(a, bytes, 'large');
        const result = await a.read(key);
        expect(result).toBeDefined();
        expect(result!.length).toBe(8 * MiB);
        const { size, digests } = await digestStream(result!.stream);
        expect(size).toBe(8 * MiB);
        expect(digests).toEqual(digestsOf(bytes));
      }, 120_000);

      h.test('concurrent reads of one key are independent', async (a) => {
        const bytes = patternBytes(100_000, 6);
        const key = await put(a, bytes);
        const [x, y] = await Promise.all([readBytes(a, key), readBytes(a, key)]);
        expect(Buffer.compare(x.bytes, Buffer.from(bytes))).toBe(0);
        expect(Buffer.compare(y.bytes, Buffer.from(bytes))).toBe(0);
      });

      h.test('a key that is a prefix of other keys is not an object', async (a) => {
        const key = await put(a, patternBytes(10), 'nested');
        const cut = key.lastIndexOf('/');
        const parents = cut > 0 ? [key.slice(0, cut), key.slice(0, cut + 1)] : [key.slice(0, Math.max(1, key.length - 1))];
        for (const parent of parents) {
          for (const op of ['stat', 'read'] as const) {
            let value: unknown;
            try {
              value = await a[op](parent);
            } catch (e) {
              if (AdapterError.is(e, 'invalid')) continue;
              expect.fail(`${op}(${JSON.stringify(parent)}) MUST give undefined or AdapterError 'invalid', got ${describeError(e)}`);
            }
            if (value && op === 'read') (value as StorageReadResult).stream.destroy();
            expect(value, `${op}(${JSON.stringify(parent)}) of a key's prefix`).toBeUndefined();
          }
        }
      });
    });

    h.group('range reads', () => {
      const bytes = patternBytes(1000, 8);
      const expectRange = async (a: StorageAdapter, key: StorageKey, start: number, end: number | undefined, from: number, to: number): Promise<void> => {
        const { result, bytes: got } = await readBytes(a, key, end === undefined ? { start } : { start, end });
        expect(result.size, 'size is the whole object').toBe(1000);
        expect(result.length, 'length is the range').toBe(to - from);
        expect(Buffer.compare(got, Buffer.from(bytes.subarray(from, to)))).toBe(0);
      };

      h.test('range: the first byte', async (a, tc) => {
        needRange(tc, a);
        await expectRange(a, await put(a, bytes), 0, 0, 0, 1);
      });

      h.test('range: the middle', async (a, tc) => {
        needRange(tc, a);
        await expectRange(a, await put(a, bytes), 100, 499, 100, 500);
      });

      h.test('range: the last byte', async (a, tc) => {
        needRange(tc, a);
        await expectRange(a, await put(a, bytes), 999, 999, 999, 1000);
      });

      h.test('range: open-ended to the last byte', async (a, tc) => {
        needRange(tc, a);
        await expectRange(a, await put(a, bytes), 600, undefined, 600, 1000);
      });

      h.test('range: the middle and the tail of an object of 300 KiB (adapters may read small objects another way)', async (a, tc) => {
        needRange(tc, a);
        const large = patternBytes(300 * 1024, 9);
        const key = await put(a, large);
        for (const [start, end] of [[70_000, 250_000], [300 * 1024 - 10, undefined]] as const) {
          const { result, bytes: got } = await readBytes(a, key, end === undefined ? { start } : { start, end });
          const to = end === undefined ? large.length : end + 1;
          expect(result.size, 'size is the whole object').toBe(large.length);
          expect(result.length, 'length is the range').toBe(to - start);
          expect(Buffer.compare(got, Buffer.from(large.subarray(start, to)))).toBe(0);
        }
      });

      h.test('range: starting past the end fails with invalid', async (a, tc) => {
        needRange(tc, a);
        const key = await put(a, bytes);
        await expectAdapterError(() => a.read(key, { range: { start: 1000 } }), 'invalid', 'read with range.start = size');
        await expectAdapterError(() => a.read(key, { range: { start: 5000, end: 6000 } }), 'invalid', 'read with a range wholly past the end');
      });
    });

    h.group('write and commit', () => {
      h.test('round-trips bytes under a key that holds the write id', async (a, tc) => {
        needWrite(tc, a);
        const bytes = patternBytes(70_000, 10);
        const temp = await spool(a, bytesSource(bytes, 4096));
        const key = await temp.commit('testkit:round-trip');
        expect(key).toBeTypeOf('string');
        // "The key `commit` returns MUST contain it" (the core checks it too).
        expect(key.includes(temp.id), `key ${key} contains the write id ${temp.id}`).toBe(true);
        expect((await a.stat(key))?.size).toBe(70_000);
        const { bytes: got } = await readBytes(a, key);
        expect(Buffer.compare(got, Buffer.from(bytes))).toBe(0);
      });

      h.test('writes an empty object', async (a, tc) => {
        needWrite(tc, a);
        const key = await (await spool(a, bytesSource(new Uint8Array(0)))).commit('testkit:empty');
        const { result, bytes } = await readBytes(a, key);
        expect(result.size).toBe(0);
        expect(bytes.length).toBe(0);
      });

      h.test('streams an 8 MiB source without needing it whole', async (a, tc) => {
        needWrite(tc, a);
        const digester = new Digester();
        const temp = await spool(a, generatedSource(8 * MiB, 64 * 1024, { digester }));
        const expected = digester.digest();
        const key = await temp.commit('testkit:large');
        const result = await a.read(key);
        expect(result?.length).toBe(8 * MiB);
        const read = await digestStream(result!.stream);
        expect(read.size).toBe(8 * MiB);
        expect(read.digests).toEqual(expected);
      }, 120_000);

      h.test('nothing is listed before commit', async (a, tc) => {
        needWrite(tc, a);
        needList(tc, a);
        const before = await listedKeys(a);
        const temp = await spool(a, bytesSource(patternBytes(1000)));
        expect(await newKeys(a, before), 'keys listed after the bytes arrived, before commit').toEqual([]);
        await temp.abort();
      });

      h.test('abort leaves nothing listable', async (a, tc) => {
        needWrite(tc, a);
        const before = await listedKeys(a);
        const temp = await spool(a, bytesSource(patternBytes(50_000)));
        await temp.abort();
        expect(await newKeys(a, before), 'keys listed after abort').toEqual([]);
      });

      h.test('abort before the sink finished leaves nothing', async (a, tc) => {
        needWrite(tc, a);
        const before = await listedKeys(a);
        const temp = await a.openTemp!({ id: randomBytes(16).toString('hex') });
        await new Promise<void>((resolve, reject) => temp.sink.write(Buffer.from(patternBytes(1000)), (e) => (e ? reject(e) : resolve())));
        temp.sink.destroy();
        await temp.abort();
        expect(await newKeys(a, before)).toEqual([]);
      });

      h.test('a source that errors mid-way leaves nothing once aborted', async (a, tc) => {
        needWrite(tc, a);
        const before = await listedKeys(a);
        const boom = new Error('testkit: source failed mid-way');
        const source = generatedSource(4 * MiB, 64 * 1024, { onChunk: (i) => { if (i === 8) throw boom; } });
        await expect(spool(a, source)).rejects.toBe(boom);
        expect(await newKeys(a, before)).toEqual([]);
      });

      h.test('an AbortSignal fired mid-write stops the sink and leaves nothing once aborted', async (a, tc) => {
        needWrite(tc, a);
        const before = await listedKeys(a);
        const controller = new AbortController();
        let consumed = 0;
        const source = generatedSource(16 * MiB, 64 * 1024, {
          onChunk: async (i) => {
            consumed = i + 1;
            if (i === 4) controller.abort(new Error('testkit: aborted'));
            if (i > 4) await new Promise((r) => setTimeout(r, 5));
          },
        });
        await expect(spool(a, source, { signal: controller.signal })).rejects.toBeDefined();
        expect(consumed, 'the write stops reading soon after the signal fires').toBeLessThan(64);
        expect(await newKeys(a, before)).toEqual([]);
      });

      h.test('an already aborted signal rejects openTemp', async (a, tc) => {
        needWrite(tc, a);
        const before = await listedKeys(a);
        await expect(a.openTemp!({ id: randomBytes(16).toString('hex'), signal: AbortSignal.abort() })).rejects.toBeDefined();
        expect(await newKeys(a, before)).toEqual([]);
      });

      h.test('writes in flight at once keep their own bytes', async (a, tc) => {
        needWrite(tc, a);
        const one = patternBytes(300_000, 16);
        const two = patternBytes(200_000, 17);
        const [t1, t2] = await Promise.all([a.openTemp!({ id: randomBytes(16).toString('hex') }), a.openTemp!({ id: randomBytes(16).toString('hex') })]);
        // Interleave the two uploads chunk by chunk, as two concurrent requests do.
        const write = (t: TempWrite, b: Uint8Array) => new Promise<void>((resolve, reject) => t.sink.write(Buffer.from(b), (e) => (e ? reject(e) : resolve())));
        for (let off = 0; off < one.length; off += 50_000) {
          await write(t1, one.subarray(off, off + 50_000));
          if (off < two.length) await write(t2, two.subarray(off, off + 50_000));
        }
        const finish = (t: TempWrite) => new Promise<void>((resolve, reject) => { t.sink.once('error', reject); t.sink.end(() => resolve()); });
        await Promise.all([finish(t1), finish(t2)]);
        const [k1, k2] = await Promise.all([t1.commit('testkit:concurrent-1'), t2.commit('testkit:concurrent-2')]);
        expect(Buffer.compare((await readBytes(a, k1)).bytes, Buffer.from(one))).toBe(0);
        expect(Buffer.compare((await readBytes(a, k2)).bytes, Buffer.from(two))).toBe(0);
      });

      h.test('commits of one name produce distinct keys', async (a, tc) => {
        needWrite(tc, a);
        const one = patternBytes(100, 13);
        const two = patternBytes(200, 14);
        const k1 = await (await spool(a, bytesSource(one))).commit('testkit:same-name');
        const k2 = await (await spool(a, bytesSource(two))).commit('testkit:same-name');
        expect(k1).not.toBe(k2);
        expect(Buffer.compare((await readBytes(a, k1)).bytes, Buffer.from(one))).toBe(0);
        expect(Buffer.compare((await readBytes(a, k2)).bytes, Buffer.from(two))).toBe(0);
        if (a.capabilities.delete) {
          await a.delete!(k1);
          expect(await a.stat(k1)).toBeUndefined();
          expect(Buffer.compare((await readBytes(a, k2)).bytes, Buffer.from(two)), 'deleting one leaves the other').toBe(0);
        }
      });

      h.test('commits of identical bytes produce distinct keys', async (a, tc) => {
        needWrite(tc, a);
        const bytes = patternBytes(100, 15);
        const k1 = await (await spool(a, bytesSource(bytes))).commit('testkit:twin-1');
        const k2 = await (await spool(a, bytesSource(bytes))).commit('testkit:twin-2');
        expect(k1).not.toBe(k2);
        if (a.capabilities.delete) {
          await a.delete!(k1);
          expect(Buffer.compare((await readBytes(a, k2)).bytes, Buffer.from(bytes)), 'deleting one leaves the other').toBe(0);
        }
      });

      h.test('keys are derived from the name, never the raw name', async (a, tc) => {
        needWrite(tc, a);
        const names = ['a/b/../c', ...HOSTILE_IDENTIFIERS, 'x\u0000y'];
        for (const pid of names) {
          const bytes = patternBytes(50, pid.length);
          const temp = await spool(a, bytesSource(bytes));
          let key: StorageKey;
          try {
            key = await temp.commit(pid);
          } catch (e) {
            // A NUL cannot occur in an XML-carried PID; refusing it as invalid is acceptable.
            if (pid.includes('\u0000') && AdapterError.is(e, 'invalid')) { await temp.abort(); continue; }
            throw new Error(`commit(${JSON.stringify(pid.slice(0, 60))}) MUST accept any PID as name, got ${describeError(e)}`, { cause: e });
          }
          expect(key.includes('../'), `key for ${JSON.stringify(pid.slice(0, 60))} contains '../': ${key}`).toBe(false);
          expect(key.includes('..\\'), `key contains '..\\': ${key}`).toBe(false);
          expect(key.includes('\u0000'), 'key contains NUL').toBe(false);
          if (pid.length >= 6 && !/^[0-9a-f]+$/i.test(pid)) expect(key.includes(pid), `key ${JSON.stringify(key)} contains the raw name`).toBe(false);
          const { bytes: got } = await readBytes(a, key);
          expect(Buffer.compare(got, Buffer.from(bytes))).toBe(0);
        }
      }, 60_000);
    });

    h.group('delete', () => {
      h.test('delete removes the bytes', async (a, tc) => {
        needDelete(tc, a);
        const key = await put(a, patternBytes(100));
        await a.delete!(key);
        expect(await a.stat(key)).toBeUndefined();
        expect(await a.read(key)).toBeUndefined();
        if (a.capabilities.list) expect((await listed(a)).has(key)).toBe(false);
      });

      h.test('delete of an absent key resolves', async (a, tc) => {
        needDelete(tc, a);
        const key = await put(a, patternBytes(100));
        await a.delete!(key);
        await a.delete!(key);
        await a.delete!(await absentKey(a));
      });
    });

    h.group('list', () => {
      h.test('list yields every stored key with its size', async (a, tc) => {
        needList(tc, a);
        const sizes = [0, 1, 1000, 65_537];
        const keys = [];
        for (const [i, size] of sizes.entries()) keys.push(await put(a, patternBytes(size, 20 + i), `listed-${i}`));
        const all = await listed(a);
        for (const [i, key] of keys.entries()) {
          const entry = all.get(key);
          expect(entry, `list MUST yield ${key}`).toBeDefined();
          expect(entry!.size).toBe(sizes[i]);
          expect(entry!.modified).toBeInstanceOf(Date);
        }
      });

      h.test('list with a prefix yields only keys under it', async (a, tc) => {
        needList(tc, a);
        const keys = [await put(a, patternBytes(10, 30), 'p1'), await put(a, patternBytes(10, 31), 'p2')];
        for (const key of keys) {
          const cut = key.lastIndexOf('/');
          if (cut <= 0) continue;
          const prefix = key.slice(0, cut + 1);
          const under = await listed(a, prefix);
          expect(under.has(key), `list({ prefix: ${JSON.stringify(prefix)} }) MUST yield ${key}`).toBe(true);
          for (const k of under.keys()) expect(k.startsWith(prefix), `${k} is not under ${prefix}`).toBe(true);
        }
      });
    });

    h.group('hostile keys', () => {
      const outcome = async (what: string, run: () => Promise<unknown>): Promise<void> => {
        let value: unknown;
        try {
          value = await run();
        } catch (e) {
          if (AdapterError.is(e, 'invalid')) return;
          expect.fail(`${what} MUST give undefined or AdapterError 'invalid', got ${describeError(e)}`);
        }
        if (value && typeof value === 'object' && 'stream' in value) (value as StorageReadResult).stream.destroy();
        expect(value, `${what} MUST NOT find anything`).toBeUndefined();
      };

      h.test('stat never reaches outside the root', async (a) => {
        await put(a, patternBytes(10), 'inside');
        for (const key of HOSTILE_STORAGE_KEYS) await outcome(`stat(${JSON.stringify(key)})`, () => a.stat(key));
      });

      h.test('read never reaches outside the root', async (a) => {
        await put(a, patternBytes(10), 'inside');
        for (const key of HOSTILE_STORAGE_KEYS) await outcome(`read(${JSON.stringify(key)})`, () => a.read(key));
      });

      h.test('delete of a hostile key resolves or fails with invalid', async (a, tc) => {
        needDelete(tc, a);
        const tag = `memberkit-testkit-absent-${process.pid}-${Date.now()}`;
        // Only names that exist nowhere, so a broken adapter cannot destroy anything.
        const keys = [`../${tag}`, `a/../../${tag}`, `/tmp/${tag}`, `..\\${tag}`, `${tag}\u0000y`, `${'../'.repeat(40)}tmp/${tag}`];
        for (const key of keys) await outcome(`delete(${JSON.stringify(key)})`, () => a.delete!(key));
      });

      h.test('list with a hostile prefix yields nothing outside the root', async (a, tc) => {
        needList(tc, a);
        await put(a, patternBytes(10), 'inside');
        for (const prefix of ['../', '/', `${'../'.repeat(40)}etc/`, '/etc/', '..\\']) {
          try {
            const entries = await listed(a, prefix);
            for (const k of entries.keys()) expect(k.startsWith(prefix), `list({ prefix: ${JSON.stringify(prefix)} }) yielded ${k}`).toBe(true);
            expect([...entries.keys()], `list({ prefix: ${JSON.stringify(prefix)} }) MUST NOT yield anything the suite did not store`).toEqual([]);
          } catch (e) {
            if (!AdapterError.is(e, 'invalid')) throw e;
          }
        }
      });
    });
  });
}
