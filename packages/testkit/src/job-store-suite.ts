import { describe, expect, it } from 'vitest';
import type { JobStore } from '@memberkit/types';
import type { SuiteContext } from './suite-context.js';
import { expectAdapterError } from './adapter-errors.js';

/**
 * The JobStore contract (packages/types/src/ports/job-store.ts): durable jobs, exactly-once
 * claims, leases that expire, retries and dead jobs, dedupe keys.
 */
export function runJobStoreSuite(name: string, ctx: SuiteContext<JobStore>): void {
  const withStore = (fn: (s: JobStore) => Promise<void>) => async () => {
    const s = await ctx.create();
    try {
      await fn(s);
    } finally {
      await ctx.destroy?.(s);
    }
  };

  describe(`JobStore conformance: ${name}`, () => {
    it('enqueues, claims once, completes', withStore(async (s) => {
      const id = await s.enqueue('replicate', { pid: 'a/b', n: 1 });
      const job = await s.claim(['replicate'], 'w1', 60_000);
      expect(job).toMatchObject({ id, kind: 'replicate', payload: { pid: 'a/b', n: 1 }, attempts: 1, state: 'running' });
      expect(await s.claim(['replicate'], 'w2', 60_000)).toBeUndefined();
      await s.complete(id, 'w1');
      expect((await s.get(id))?.state).toBe('done');
      expect(await s.claim(['replicate'], 'w2', 60_000)).toBeUndefined();
    }));

    it('claims only the kinds asked for, oldest due first, and not before runAfter', withStore(async (s) => {
      const later = await s.enqueue('refresh', 1, { runAfter: new Date(Date.now() + 60_000) });
      const first = await s.enqueue('refresh', 2);
      const second = await s.enqueue('refresh', 3);
      await s.enqueue('other', 4);
      expect((await s.claim(['refresh'], 'w', 60_000))?.id).toBe(first);
      expect((await s.claim(['refresh'], 'w', 60_000))?.id).toBe(second);
      expect(await s.claim(['refresh'], 'w', 60_000)).toBeUndefined();
      expect((await s.get(later))?.state).toBe('queued');
    }));

    it('retries a failed attempt at retryAt, and fails for good without one', withStore(async (s) => {
      const id = await s.enqueue('replicate', {});
      await s.claim(['replicate'], 'w', 60_000);
      await s.fail(id, 'w', 'source unreachable', new Date(Date.now() - 1));
      const again = await s.claim(['replicate'], 'w', 60_000);
      expect(again).toMatchObject({ id, attempts: 2, lastError: 'source unreachable' });
      await s.fail(id, 'w', 'checksum mismatch');
      expect(await s.get(id)).toMatchObject({ state: 'failed', lastError: 'checksum mismatch' });
      expect(await s.list({ state: 'failed' })).toHaveLength(1);
    }));

    it('makes a job whose lease expired claimable again (its worker died)', withStore(async (s) => {
      const id = await s.enqueue('replicate', {});
      await s.claim(['replicate'], 'dead-worker', 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await s.claim(['replicate'], 'w2', 60_000)).toMatchObject({ id, attempts: 2 });
    }));

    it('fences complete and fail by the lease: a worker that lost it changes nothing', withStore(async (s) => {
      const id = await s.enqueue('replicate', {});
      await s.claim(['replicate'], 'slow-worker', 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await s.claim(['replicate'], 'w2', 60_000)).toMatchObject({ id, attempts: 2 });
      await expectAdapterError(() => s.complete(id, 'slow-worker'), 'conflict', 'complete by a worker that lost the lease');
      await expectAdapterError(() => s.fail(id, 'slow-worker', 'late failure'), 'conflict', 'fail by a worker that lost the lease');
      await expectAdapterError(() => s.fail(id, 'slow-worker', 'late failure', new Date()), 'conflict', 'retry by a worker that lost the lease');
      expect(await s.get(id)).toMatchObject({ state: 'running', attempts: 2 });
      expect((await s.get(id))?.lastError).toBeUndefined();
      await s.complete(id, 'w2');
      expect((await s.get(id))?.state).toBe('done');
      await expectAdapterError(() => s.complete(id, 'w2'), 'conflict', 'complete of a job already done');
    }));

    it('keeps one live job per dedupe key', withStore(async (s) => {
      const a = await s.enqueue('refresh', { v: 1 }, { dedupeKey: 'refresh:x' });
      const b = await s.enqueue('refresh', { v: 2 }, { dedupeKey: 'refresh:x' });
      expect(b).toBe(a);
      await s.claim(['refresh'], 'w', 60_000);
      await s.complete(a, 'w');
      const c = await s.enqueue('refresh', { v: 3 }, { dedupeKey: 'refresh:x' });
      expect(c).not.toBe(a);
    }));

    it('hands each job to exactly one of many concurrent claimers', withStore(async (s) => {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => s.enqueue('replicate', { i })));
      const claimed = await Promise.all(Array.from({ length: 25 }, (_, i) => s.claim(['replicate'], `w${i}`, 60_000)));
      const got = claimed.filter((j) => j !== undefined).map((j) => j.id).sort();
      expect(got).toEqual([...ids].sort());
    }));
  });
}
