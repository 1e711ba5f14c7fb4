// SQLite commits with synchronous=NORMAL (no fsync inside COMMIT, on the main thread); a write
// is answered once WalSync flushed the write-ahead log after its commit, one flush for the
// writes that wait together. These tests hold the real flush (fdatasync) at a gate to see
// when callers are answered.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AdapterError } from '@memberkit/types';
import { buildObjectRecord } from '@memberkit/testkit';
import { createSqlCatalogue } from '../src/index.js';
import { WalSync } from '../src/wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'mk-wal-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real fdatasync, counted, held while `hold` is set. */
function gatedFlush() {
  const state = {
    started: 0,
    ended: 0,
    failNext: undefined as Error | undefined,
    held: undefined as { promise: Promise<void>; open: () => void } | undefined,
    hold() {
      let open!: () => void;
      state.held = { promise: new Promise<void>((r) => (open = r)), open };
    },
    release() {
      const held = state.held;
      state.held = undefined;
      held?.open();
    },
    flush: async (handle: FileHandle) => {
      state.started++;
      await state.held?.promise;
      const failure = state.failNext;
      state.failNext = undefined;
      if (failure) throw failure;
      await handle.datasync();
      state.ended++;
    },
  };
  return state;
}

const settledSoon = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setTimeout(r, 30));
  return done;
};

describe('WalSync', () => {
  it('answers a caller only after a flush that began after it asked; callers during one flush share the next', async () => {
    const file = join(dir, 'group.db-wal');
    writeFileSync(file, 'frames');
    const gate = gatedFlush();
    const wal = new WalSync(file, gate.flush);
    gate.hold();
    const first = wal.sync();
    await new Promise((r) => setTimeout(r, 10));
    expect(gate.started).toBe(1);
    // These asked while the first flush was under way: it may have begun before their commits.
    const later = [wal.sync(), wal.sync(), wal.sync()];
    expect(await settledSoon(first)).toBe(false);
    gate.release();
    await first;
    expect(gate.ended).toBe(1);
    await Promise.all(later);
    expect(gate.started).toBe(2);
    expect(gate.ended).toBe(2);
    // idle again: the next caller starts a flush at once
    await wal.sync();
    expect(gate.started).toBe(3);
    await wal.close();
  });

  it('fails the callers of a flush that failed with unavailable, and flushes again for the next', async () => {
    const file = join(dir, 'fail.db-wal');
    writeFileSync(file, 'frames');
    const gate = gatedFlush();
    const wal = new WalSync(file, gate.flush);
    gate.failNext = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    const error = await wal.sync().catch((e: unknown) => e);
    expect(AdapterError.is(error) && error.kind).toBe('unavailable');
    expect((error as Error).message).toMatch(/write-ahead log could not be flushed.*EIO/);
    // the callers' transactions did commit: their change is made, only not confirmed on disk
    expect((error as AdapterError).committed).toBe(true);
    await wal.sync();
    expect(gate.ended).toBe(1);
    await wal.close();
  });

  it('fails with unavailable when the log cannot be opened, and opens it again at the next sync', async () => {
    const file = join(dir, 'unopenable.db-wal');
    mkdirSync(file); // a folder where the log should be: open fails with EISDIR
    const gate = gatedFlush();
    const wal = new WalSync(file, gate.flush);
    const error = await wal.sync().catch((e: unknown) => e);
    expect(AdapterError.is(error) && error.kind).toBe('unavailable');
    expect((error as Error).message).toMatch(/cannot open the catalogue's write-ahead log/);
    expect((error as AdapterError).committed).toBe(true);
    rmSync(file, { recursive: true });
    writeFileSync(file, 'frames');
    await wal.sync();
    expect(gate.ended).toBe(1);
    await wal.close();
  });

  it('has nothing to flush before the log exists, and flushes it once it does', async () => {
    const file = join(dir, 'later.db-wal');
    const gate = gatedFlush();
    const wal = new WalSync(file, gate.flush);
    await wal.sync();
    expect(gate.started).toBe(0);
    writeFileSync(file, 'frames');
    await wal.sync();
    expect(gate.ended).toBe(1);
    await wal.close();
  });
});

describe('SQLite catalogue writes wait for the flush of the write-ahead log', () => {
  it('answers a catalogue change only once the log is flushed, concurrent changes with few flushes, and intents at commit', async () => {
    const gate = gatedFlush();
    const store = createSqlCatalogue({ dialect: 'sqlite', connection: { file: join(dir, 'catalogue.db'), walFlush: gate.flush } });
    await store.open();
    try {
      await store.catalogue.apply({ insert: [buildObjectRecord('wal-0')] });
      const before = gate.started;
      expect(before).toBeGreaterThan(0);

      gate.hold();
      const applied = store.catalogue.apply({ insert: [buildObjectRecord('wal-1')] });
      expect(await settledSoon(applied)).toBe(false);
      // Committed (other readers see it) but not answered: the flush is held.
      expect(await store.catalogue.get('wal-1')).toBeDefined();
      // A write intent is answered at its commit: a create does not pay a second flush before its bytes.
      const intent = store.catalogue.intend!('bytes-of-wal-2', ['wal-2']);
      expect(await settledSoon(intent)).toBe(true);
      // Events and the other writes wait like catalogue changes.
      const logged = store.eventLog.append([{ identifier: 'wal-1', ipAddress: '127.0.0.1', userAgent: 't', subject: 'public', event: 'read', dateLogged: new Date(), nodeIdentifier: 'urn:node:T' }]);
      expect(await settledSoon(logged)).toBe(false);
      gate.release();
      await applied;
      await logged;

      // Twenty changes sent at once: one group commit, answered after one or two flushes.
      const started = gate.started;
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.catalogue.apply({ insert: [buildObjectRecord(`wal-burst-${i}`)] })));
      expect(gate.started - started).toBeGreaterThan(0);
      expect(gate.started - started).toBeLessThanOrEqual(2);
    } finally {
      gate.release();
      await store.close();
    }
  });

  /** Two event-loop turns: a write sent before them has committed (its group runs at the check phase) and asked for its flush. */
  const turns = async () => {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  };

  /**
   * A store on `name`.db whose flush is held at the gate while under way: `<name>-0` written and
   * flushed, then `<name>-1` committed (`first`, unanswered) with its flush started.
   */
  async function flushUnderWay(name: string) {
    const gate = gatedFlush();
    const store = createSqlCatalogue({ dialect: 'sqlite', connection: { file: join(dir, `${name}.db`), walFlush: gate.flush } });
    await store.open();
    await store.catalogue.apply({ insert: [buildObjectRecord(`${name}-0`)] });
    gate.hold();
    const first = store.catalogue.apply({ insert: [buildObjectRecord(`${name}-1`)] });
    await turns();
    return { gate, store, first };
  }

  it('commits the durable writes sent while a flush runs together when it ends, answered after the next flush; intents at once', async () => {
    const { gate, store, first } = await flushUnderWay('held');
    try {
      expect(gate.started - gate.ended).toBe(1); // held-1 committed, its flush under way
      const commits = store.store.changeMark()!.commits;
      // Three groups of durable writes, each sent in a turn of its own while the flush runs.
      const later: Promise<unknown>[] = [];
      for (let i = 2; i <= 4; i++) {
        later.push(store.catalogue.apply({ insert: [buildObjectRecord(`held-${i}`)] }));
        await turns();
      }
      later.push(store.eventLog.append([{ identifier: 'held-1', ipAddress: '127.0.0.1', userAgent: 't', subject: 'public', event: 'read', dateLogged: new Date(), nodeIdentifier: 'urn:node:T' }]));
      await turns();
      // Not committed yet: no answer could come before the next flush anyway.
      expect(store.store.changeMark()!.commits).toBe(commits);
      expect(await store.catalogue.get('held-2')).toBeUndefined();
      // A write intent is answered at its commit, flush or not.
      expect(await settledSoon(store.catalogue.intend!('bytes-of-held-5', ['held-5']))).toBe(true);
      expect(store.store.changeMark()!.commits).toBe(commits + 1);
      const started = gate.started;
      gate.release();
      await first;
      await Promise.all(later);
      // One transaction for the four held writes; one flush after it answered them.
      expect(store.store.changeMark()!.commits).toBe(commits + 2);
      expect(gate.started - started).toBe(1);
      for (let i = 2; i <= 4; i++) expect(await store.catalogue.get(`held-${i}`)).toBeDefined();
    } finally {
      gate.release();
      await store.close();
    }
  });

  it('a close while writes are held fails those writes with unavailable (nothing left unanswered, no stray rejection)', async () => {
    const { gate, store, first } = await flushUnderWay('close');
    const held = store.catalogue.apply({ insert: [buildObjectRecord('close-2')] });
    const heldOutcome = held.then(() => 'answered', (e: unknown) => e);
    await turns();
    const closing = store.close();
    gate.release();
    await closing;
    await first;
    const error = await heldOutcome;
    expect(AdapterError.is(error) && error.kind).toBe('unavailable');
  });

  it('does not flush with fsync: false', async () => {
    const gate = gatedFlush();
    const store = createSqlCatalogue({ dialect: 'sqlite', connection: { file: join(dir, 'nosync.db'), fsync: false, walFlush: gate.flush } });
    await store.open();
    try {
      await store.catalogue.apply({ insert: [buildObjectRecord('nosync-1')] });
      expect(gate.started).toBe(0);
    } finally {
      await store.close();
    }
  });
});
