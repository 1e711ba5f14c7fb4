// The wrap scan state (SqlScanState, the ScanStateStore port) on one dialect: rows per root,
// scan marks that never move back, batches larger than one statement, generated dataset maps,
// and the root's lease between two pools (two node processes) on one database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanStateRow } from '@memberkit/types';
import { createSqlCatalogue, SqlScanState, type SqlCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase, type FreshDatabase } from './databases.js';

let roots = 0;
/** A root no other test uses (the database is shared by the file's tests). */
const freshRoot = (label = 'tree') => `/srv/${label}-${++roots}-${Date.now().toString(36)}`;

function row(key: string, scan: number, extra: Partial<ScanStateRow> = {}): ScanStateRow {
  return { key, pid: `pid:${key}`, size: key.length, version: `v-${key.length}`, algorithm: 'SHA-1', checksum: 'ab'.repeat(20), format: 'text/plain', scan, ...extra };
}

/** Every row of `root`, read `limit` at a time through `read`. */
async function all(read: (after: string) => Promise<ScanStateRow[]>, limit: number): Promise<ScanStateRow[]> {
  const out: ScanStateRow[] = [];
  for (let after = ''; ;) {
    const page = await read(after);
    out.push(...page);
    if (page.length < limit) return out;
    after = page[page.length - 1]!.key;
  }
}

export function runScanStateSuite(dialect: SqlDialectName): void {
  let fresh: FreshDatabase;
  const open: SqlCatalogue[] = [];
  /** The lease clock both pools read (SqlScanState's `now`), moved by the tests. */
  let clock = 1_700_000_000_000;
  beforeAll(async () => {
    fresh = await freshDatabase(dialect);
  });
  afterAll(async () => {
    for (const s of open) await s.close();
    await fresh?.drop();
  });
  /** One process's view: its own pool on the shared database. */
  const pool = async (): Promise<SqlScanState> => {
    const s = createSqlCatalogue({ dialect, connection: fresh.connection });
    await s.open();
    open.push(s);
    return new SqlScanState(s.store, () => clock);
  };

  describe(`wrap scan state: ${dialect}`, () => {
    it('keeps rows per root, every key distinct (case, trailing space, non-ASCII, long), paged in one order', async () => {
      const state = await pool();
      const root = freshRoot();
      // A root name longer than any index allows is still one root.
      const other = `s3://bucket/${'deep/'.repeat(600)}`;
      expect(await state.lastScan(root)).toBe(0);
      expect(await state.hasEntries(root)).toBe(false);
      const keys = ['a.txt', 'A.txt', 'a.txt ', 'b/ä.csv', 'b/a\u0308.csv', 'z/日本.xml', `long/${'é'.repeat(600)}.dat`];
      await state.put(root, keys.map((k, i) => row(k, 1, { size: i, version: i % 2 ? '1700000000123.5' : '"9b2cf535f27731c974343645a3985328"', format: i === 0 ? null : 'text/csv' })));
      await state.put(other, [row('a.txt', 7, { pid: 'other-a' })]);
      expect(await state.hasEntries(root)).toBe(true);
      expect(await state.lastScan(root)).toBe(1);
      expect(await state.lastScan(other)).toBe(7);

      const got = await state.getMany(root, [...keys, 'absent']);
      expect([...got.keys()].sort()).toEqual([...keys].sort());
      keys.forEach((k, i) => expect(got.get(k), k).toEqual(row(k, 1, { size: i, version: i % 2 ? '1700000000123.5' : '"9b2cf535f27731c974343645a3985328"', format: i === 0 ? null : 'text/csv' })));
      expect((await state.getMany(other, ['a.txt'])).get('a.txt')?.pid).toBe('other-a');

      // Pages of 2 see every key once, in one ascending order (the database's), whatever it is.
      const paged = await all((after) => state.page(root, after, 2), 2);
      expect(paged.map((r) => r.key).sort()).toEqual([...keys].sort());
      expect(new Set(paged.map((r) => r.key)).size).toBe(keys.length);
      const unseen = await all((after) => state.unseen(root, 2, after, 3), 3);
      expect(unseen.map((r) => r.key)).toEqual(paged.map((r) => r.key));
      expect(await state.unseen(root, 1, '', 10)).toEqual([]);
    });

    it('never moves a scan mark back: put, touch and forget leave a later scan\'s mark alone', async () => {
      const state = await pool();
      const root = freshRoot();
      await state.put(root, [row('k', 5), row('old', 2)]);
      // A slower scan (3) records the entry after scan 5 saw it: its fields, scan 5's mark.
      await state.put(root, [row('k', 3, { checksum: 'cd'.repeat(20), size: 99 })]);
      expect((await state.getMany(root, ['k'])).get('k')).toMatchObject({ scan: 5, size: 99, checksum: 'cd'.repeat(20) });
      await state.touch(root, ['k', 'old'], 4);
      expect([...(await state.getMany(root, ['k', 'old'])).values()].map((r) => `${r.key}:${r.scan}`).sort()).toEqual(['k:5', 'old:4']);
      await state.touch(root, ['k'], 6);
      expect((await state.getMany(root, ['k'])).get('k')?.scan).toBe(6);
      expect(await state.lastScan(root)).toBe(6);
      // Scan 6 would remove both; 'k' was seen by scan 6, so only 'old' goes.
      expect((await state.unseen(root, 6, '', 10)).map((r) => r.key)).toEqual(['old']);
      await state.forget(root, ['k', 'old'], 6);
      expect([...(await state.getMany(root, ['k', 'old'])).keys()]).toEqual(['k']);
      await state.forget(root, ['k'], 7);
      expect(await state.hasEntries(root)).toBe(false);
    });

    it('takes batches larger than one statement (450 keys) in put, getMany, touch, unseen and forget', async () => {
      const state = await pool();
      const root = freshRoot();
      const keys = Array.from({ length: 450 }, (_, i) => `d${String(i).padStart(4, '0')}/f.txt`);
      await state.put(root, keys.map((k) => row(k, 1)));
      expect((await state.getMany(root, keys)).size).toBe(450);
      await state.touch(root, keys.slice(0, 400), 2);
      const left = await all((after) => state.unseen(root, 2, after, 100), 100);
      expect(left.map((r) => r.key)).toEqual(keys.slice(400));
      await state.forget(root, keys, 2);
      expect((await all((after) => state.page(root, after, 1000), 1000)).map((r) => r.key)).toEqual(keys.slice(0, 400));
      await state.forget(root, keys, 3);
      expect(await state.hasEntries(root)).toBe(false);
    });

    it('lease: one holder at a time across two pools; the holder renews and re-takes it; release frees it', async () => {
      const [a, b] = [await pool(), await pool()];
      const root = freshRoot();
      expect(await a.tryAcquire(root, 'A', 60_000)).toBe(true);
      expect(await b.tryAcquire(root, 'B', 60_000)).toBe(false);
      expect(await a.tryAcquire(root, 'A', 60_000), 'its own lease').toBe(true);
      // Renewed at the same instant (the same lease_until): still held.
      expect(await a.renew(root, 'A', 60_000)).toBe(true);
      expect(await a.renew(root, 'A', 60_000)).toBe(true);
      expect(await b.renew(root, 'B', 60_000)).toBe(false);
      await b.release(root, 'B'); // not B's: nothing happens
      expect(await b.tryAcquire(root, 'B', 60_000)).toBe(false);
      // Another root is another lease.
      expect(await b.tryAcquire(freshRoot(), 'B', 60_000)).toBe(true);
      await a.release(root, 'A');
      expect(await a.renew(root, 'A', 60_000), 'released').toBe(false);
      expect(await b.tryAcquire(root, 'B', 60_000)).toBe(true);
      expect(await a.tryAcquire(root, 'A', 60_000)).toBe(false);
    });

    it('lease expiry: an expired lease goes to another holder; the old holder can neither renew nor release it', async () => {
      const [a, b] = [await pool(), await pool()];
      const root = freshRoot();
      expect(await a.tryAcquire(root, 'A', 1000)).toBe(true);
      clock += 999;
      expect(await b.tryAcquire(root, 'B', 1000)).toBe(false);
      // A renewal moves the expiry from now.
      expect(await a.renew(root, 'A', 1000)).toBe(true);
      clock += 999;
      expect(await b.tryAcquire(root, 'B', 1000), 'renewed 999 ms ago').toBe(false);
      clock += 1;
      expect(await b.tryAcquire(root, 'B', 1000), 'expired').toBe(true);
      expect(await a.renew(root, 'A', 1000)).toBe(false);
      await a.release(root, 'A');
      expect(await a.tryAcquire(root, 'A', 1000), 'B still holds it').toBe(false);
      expect(await b.renew(root, 'B', 1000)).toBe(true);
    });

    it('lease race: twelve takers at once from two pools, on a new root and on a free one: exactly one wins, none fails', async () => {
      const [a, b] = [await pool(), await pool()];
      for (const known of [false, true]) {
        const root = freshRoot();
        if (known) {
          // A root whose lease row exists and is free (taken and released before the race).
          expect(await a.tryAcquire(root, 'setup', 1000)).toBe(true);
          await a.release(root, 'setup');
        }
        const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).tryAcquire(root, `H${i}`, 60_000)));
        expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), root).toEqual([]);
        const winners = results.flatMap((r, i) => (r.status === 'fulfilled' && r.value ? [`H${i}`] : []));
        expect(winners, root).toHaveLength(1);
        expect(await a.renew(root, winners[0]!, 60_000)).toBe(true);
      }
    });

    it('dataset maps: bytes kept exactly, a key stored once, folders per root, removal', async () => {
      const state = await pool();
      const [root, other] = [freshRoot(), freshRoot()];
      const bytes = new Uint8Array([0, 255, 10, 13, 0x3c, 0xe2, 0x82, 0xac, 0]);
      const map = { key: '\\dataset-map\\kelp\\1', pid: 'kelp/.dataset-map.v1', folder: 'kelp', members: '["kelp/eml.xml","kelp/a.csv"]', bytes, created: 1_700_000_000_001 };
      await state.putDatasetMap(root, map);
      await state.putDatasetMap(root, { ...map, bytes: new Uint8Array([1, 2, 3]), created: 5 });
      const got = await state.datasetMap(map.key);
      expect(got).toMatchObject({ key: map.key, pid: map.pid, folder: 'kelp', members: map.members, created: map.created });
      expect(Buffer.from(got!.bytes).equals(Buffer.from(bytes))).toBe(true);
      await state.putDatasetMap(root, { ...map, key: '\\dataset-map\\kelp\\2', pid: 'kelp/.dataset-map.v2' });
      await state.putDatasetMap(other, { ...map, key: '\\dataset-map\\moss\\1', folder: 'moss' });
      expect(await state.datasetFolders(root)).toEqual(['kelp']);
      expect(await state.datasetFolders(other)).toEqual(['moss']);
      await state.deleteDatasetMap(map.key);
      expect(await state.datasetMap(map.key)).toBeUndefined();
      expect(await state.datasetMap('\\dataset-map\\kelp\\2')).toBeDefined();
    });
  });
}
