// The core's side of a write: hashing, the size limit and the pending-write state machine,
// over a minimal in-memory adapter that only offers temp bytes, commit and abort.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AdapterError, type OpenTempOptions, type StorageAdapter, type TempWrite } from '@memberkit/types';
import { receiveUpload } from '@memberkit/core';

/** A store that keeps temp bytes in memory and records what the core asked of it. */
function memoryStore(options: { badKey?: boolean; failCommits?: number; failAfterBytes?: number } = {}) {
  const committed = new Map<string, Buffer>();
  const calls = { opened: 0, commits: 0, aborts: 0 };
  let failCommits = options.failCommits ?? 0;
  const store: StorageAdapter = {
    capabilities: { write: true, delete: true, list: false, range: true, nativeChecksums: [] },
    async stat() { return undefined; },
    async read() { return undefined; },
    async delete(key) { committed.delete(key); },
    async openTemp(o: OpenTempOptions): Promise<TempWrite> {
      calls.opened++;
      const parts: Buffer[] = [];
      return {
        sink: new Writable({
          write(chunk: Buffer, _e, cb) {
            parts.push(chunk);
            const stored = parts.reduce((n, p) => n + p.length, 0);
            cb(options.failAfterBytes !== undefined && stored > options.failAfterBytes ? new AdapterError('unavailable', 'disk gone') : null);
          },
        }),
        async commit(name) {
          calls.commits++;
          if (failCommits-- > 0) throw new AdapterError('unavailable', 'try again');
          const key = options.badKey ? `objects/${name}` : `objects/${o.id}`;
          committed.set(key, Buffer.concat(parts));
          return key;
        },
        async abort() { calls.aborts++; },
      };
    },
  };
  return { store, committed, calls };
}

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

const hex = (alg: string, s: string) => createHash(alg).update(s).digest('hex');

describe('receiveUpload', () => {
  it('counts and hashes the bytes (MD5, SHA-1, SHA-256) as they flow', async () => {
    const { store, committed } = memoryStore();
    const pending = await receiveUpload(store, chunks('hello ', 'world'));
    expect(pending.size).toBe(11);
    expect(pending.checksums).toEqual({ MD5: hex('md5', 'hello world'), 'SHA-1': hex('sha1', 'hello world'), 'SHA-256': hex('sha256', 'hello world') });
    const key = await pending.commit('pid');
    expect(committed.get(key)?.toString()).toBe('hello world');
  });

  it('refuses more than maxBytes with invalid and aborts the temp bytes', async () => {
    const { store, calls } = memoryStore();
    await expect(receiveUpload(store, chunks('12345', '6'), { maxBytes: 5 })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    expect(calls.aborts).toBe(1);
    expect((await receiveUpload(store, chunks('12345'), { maxBytes: 5 })).size).toBe(5);
  });

  it("rethrows the source's own error and aborts", async () => {
    const { store, calls } = memoryStore();
    const boom = new Error('source broke');
    async function* failing(): AsyncIterable<Uint8Array> { yield new Uint8Array(3); throw boom; }
    await expect(receiveUpload(store, failing())).rejects.toBe(boom);
    expect(calls.aborts).toBe(1);
  });

  it('an abort while the source is idle (a client that stopped sending) fails at once with its reason, and aborts', async () => {
    const { store, calls } = memoryStore();
    let returned = false;
    async function* stalled(): AsyncIterable<Uint8Array> {
      try {
        yield new Uint8Array(3);
        await new Promise(() => undefined); // never sends the rest
      } finally {
        returned = true;
      }
    }
    const controller = new AbortController();
    const reason = new Error('client went away');
    const upload = receiveUpload(store, stalled(), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);
    await expect(upload).rejects.toBe(reason);
    expect(calls.aborts).toBe(1);
    expect(returned).toBe(false); // still suspended in its await: no one may wait on it
  });

  it("a sink that fails mid-stream fails the upload with the adapter's error; the source is returned", async () => {
    const { store, calls } = memoryStore({ failAfterBytes: 4 });
    let returned = false;
    async function* many(): AsyncIterable<Uint8Array> {
      try {
        for (let i = 0; i < 1000; i++) yield new Uint8Array(3);
      } finally {
        returned = true;
      }
    }
    await expect(receiveUpload(store, many())).rejects.toSatisfy((e) => AdapterError.is(e, 'unavailable'));
    expect(calls.aborts).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(returned).toBe(true);
  });

  it('commit happens once; abort is idempotent and a no-op after commit', async () => {
    const { store, calls } = memoryStore();
    const pending = await receiveUpload(store, chunks('x'));
    const [a, b] = await Promise.all([pending.commit('n'), pending.commit('n')]);
    expect(a).toBe(b);
    expect(calls.commits).toBe(1);
    await pending.abort();
    await pending.abort();
    expect(calls.aborts, 'abort after commit never reaches the adapter').toBe(0);
    const other = await receiveUpload(store, chunks('y'));
    await other.abort();
    await other.abort();
    expect(calls.aborts).toBe(1);
    await expect(other.commit('n')).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
  });

  it('a failed commit may be retried', async () => {
    const { store, calls } = memoryStore({ failCommits: 1 });
    const pending = await receiveUpload(store, chunks('z'));
    await expect(pending.commit('n')).rejects.toSatisfy((e) => AdapterError.is(e, 'unavailable'));
    expect(await pending.commit('n')).toMatch(/^objects\//);
    expect(calls.commits).toBe(2);
  });

  it('a committed key must contain the write id: keys unique to a write', async () => {
    const { store } = memoryStore({ badKey: true });
    const pending = await receiveUpload(store, chunks('z'));
    await expect(pending.commit('same-name')).rejects.toSatisfy((e) => AdapterError.is(e, 'internal'));
  });

  it('a read-only store is refused with unsupported', async () => {
    const { store } = memoryStore();
    await expect(receiveUpload({ ...store, capabilities: { ...store.capabilities, write: false } }, chunks('x'))).rejects.toSatisfy((e) => AdapterError.is(e, 'unsupported'));
  });
});
