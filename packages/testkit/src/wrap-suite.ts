import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChecksumHash, type AccessPolicy, type ChecksumAlgorithmName, type ObjectRecord } from '@memberkit/types';

/** A wrapped root (a folder, a bucket prefix) the suite changes behind the node's back. */
export interface WrapRoot {
  /** Creates or replaces the entry `key` (folders made as needed). */
  put(key: string, bytes: string): Promise<void>;
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

/** What a scan reported (the core WrapScanner's ScanReport, the fields the suite reads). */
export interface WrapScanResult {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  skipped: ReadonlyArray<{ path: string; reason: string }>;
  leased?: boolean;
}

/**
 * Where a scan waits when the suite holds it (the core's ScanPause): 'apply' after a batch was
 * planned and before it is committed (the batch's keys), 'remove' after a complete listing and
 * before unseen entries are looked at again.
 */
export type WrapScanPause = (point: 'apply' | 'remove', keys: readonly string[]) => Promise<void>;

/** One node process over the root: its own connections to the one shared catalogue. */
export interface WrapNode {
  /**
   * One scan; `lease: false` scans without taking the root's lease (to race on purpose);
   * `pause` is handed to the scanner (WrapScanner's ScanOptions.pause).
   */
  scan(options?: { lease?: boolean; pause?: WrapScanPause }): Promise<WrapScanResult>;
  /** The catalogue's record of `pid`. */
  get(pid: string): Promise<ObjectRecord | undefined>;
  /** Event-log entries (`create`, `update`, `delete`...) of `pid`. */
  events(pid: string): Promise<string[]>;
  /** PIDs the query extension (MNQuery) returns for a search of every object, right now. */
  queryPids(): Promise<string[]>;
  /** What an administrator does: a new access policy, through the node (updateSystemMetadata). */
  setAccess(pid: string, policy: AccessPolicy): Promise<void>;
  close(): Promise<void>;
}

export interface WrapSuiteTarget {
  /** A fresh, empty root. */
  root(): Promise<WrapRoot>;
  /** A node over `root`; nodes made for one root share one catalogue (as processes do). */
  node(root: WrapRoot): Promise<WrapNode>;
  /** PID the node gives the entry `key` (default: the key). */
  pidOf?(key: string): string;
}

const PRIVATE: AccessPolicy = { allow: [{ subject: ['CN=curator'], permission: ['write'] }] };

/**
 * Holds one scan at one point: the first time the scan gets there, `reached` resolves with the
 * keys it brought, and the scan waits until `release()` (later arrivals pass once released).
 */
function hold(point: 'apply' | 'remove') {
  let arrive!: (keys: string[]) => void;
  let release!: () => void;
  const reached = new Promise<string[]>((r) => (arrive = r));
  const released = new Promise<void>((r) => (release = r));
  const pause: WrapScanPause = async (p, keys) => {
    if (p !== point) return;
    arrive([...keys]);
    await released;
  };
  return { pause, reached, release };
}

/** Waits for a held scan to get to its hold; fails at once when the scan ended (or failed) first. */
async function heldAt(gate: { reached: Promise<string[]> }, scan: Promise<WrapScanResult>): Promise<string[]> {
  const ended = scan.then((r) => {
    throw new Error(`the scan ended without reaching its hold: ${JSON.stringify(r)}`);
  });
  ended.catch(() => undefined);
  return Promise.race([gate.reached, ended]);
}

function digest(algorithm: string, bytes: string): string {
  return createChecksumHash(algorithm as ChecksumAlgorithmName).update(bytes).digest('hex');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Wrap mode over one storage: files added, changed and removed reach the catalogue with their
 * events and the query index at once; two scanners at once over one root, while files change
 * and objects are made private, lose nothing and publish nothing.
 */
export function runWrapSuite(name: string, target: WrapSuiteTarget): void {
  const pid = (key: string) => target.pidOf?.(key) ?? key;

  describe(`wrap suite: ${name}`, () => {
    let root: WrapRoot;
    let nodes: WrapNode[];
    const node = async () => {
      const n = await target.node(root);
      nodes.push(n);
      return n;
    };
    beforeEach(async () => {
      root = await target.root();
      nodes = [];
    });
    afterEach(async () => {
      for (const n of nodes) await n.close();
      await root.close();
    });

    it('publishes added files with create events, visible to queries right after the scan', async () => {
      await root.put('a.csv', 'x,y\n1,2\n');
      await root.put('data/b.txt', 'hello');
      const n = await node();
      const r = await n.scan();
      expect(r).toMatchObject({ added: 2, changed: 0, removed: 0 });
      const a = await n.get(pid('a.csv'));
      expect(a?.sysmeta.size).toBe(8);
      expect(a?.storageKey).toBe('a.csv');
      expect(await n.events(pid('a.csv'))).toEqual(['create']);
      expect((await n.queryPids()).sort()).toEqual([pid('a.csv'), pid('data/b.txt')].sort());
      // A rescan of unchanged files changes nothing and logs nothing.
      expect(await n.scan()).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: 2 });
      expect(await n.events(pid('a.csv'))).toEqual(['create']);
    });

    it('updates changed files (serialVersion + 1, access kept) and removes vanished ones, with events', async () => {
      await root.put('a.csv', 'one');
      await root.put('b.csv', 'two');
      const n = await node();
      await n.scan();
      await n.setAccess(pid('a.csv'), PRIVATE);
      const before = (await n.get(pid('a.csv')))!;
      await new Promise((r) => setTimeout(r, 20)); // another mtime
      await root.put('a.csv', 'one, changed');
      await root.remove('b.csv');
      const r = await n.scan();
      expect(r).toMatchObject({ added: 0, changed: 1, removed: 1 });
      const after = (await n.get(pid('a.csv')))!;
      expect(after.sysmeta.size).toBe(12);
      expect(after.sysmeta.serialVersion).toBe(before.sysmeta.serialVersion + 1);
      expect(after.sysmeta.dateSysMetadataModified.getTime()).toBeGreaterThan(before.sysmeta.dateSysMetadataModified.getTime());
      expect(after.sysmeta.accessPolicy).toEqual(PRIVATE);
      expect(await n.get(pid('b.csv'))).toBeUndefined();
      expect(await n.events(pid('a.csv'))).toContain('update');
      expect(await n.events(pid('b.csv'))).toEqual(['create', 'delete']);
      expect(await n.queryPids()).not.toContain(pid('b.csv'));
    });

    it('refuses a scan that lists nothing over a root it knew entries in', async () => {
      await root.put('only.txt', 'x');
      const n = await node();
      await n.scan();
      await root.remove('only.txt');
      await expect(n.scan()).rejects.toMatchObject({ kind: 'unavailable' });
      expect(await n.get(pid('only.txt'))).toBeDefined();
    });

    it('lets one scanner at a time scan a root: a second scanner skips while the first is mid-scan', async () => {
      for (let i = 0; i < 40; i++) await root.put(`f${i}.txt`, `file ${i}`);
      const [a, b] = [await node(), await node()];
      // A holds the lease and stops before committing its first batch: B starts during A's scan, for certain.
      const gate = hold('apply');
      const scanA = a.scan({ pause: gate.pause });
      try {
        expect((await heldAt(gate, scanA)).length).toBeGreaterThan(0);
        const rb = await b.scan();
        expect(rb.leased, 'a second scanner ran while the first held the lease').toBe(false);
        expect(rb).toMatchObject({ added: 0, changed: 0, removed: 0 });
      } finally {
        gate.release();
      }
      expect(await scanA).toMatchObject({ added: 40, removed: 0 });
      // Once A is done the lease is free again.
      const again = await b.scan();
      expect(again.leased).not.toBe(false);
      expect(again).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: 40 });
      for (let i = 0; i < 40; i++) expect(await a.events(pid(`f${i}.txt`)), `f${i}.txt`).toEqual(['create']);
    });

    it('a scan that loses a compare-and-set to an administrator plans again: new checksum, access kept', async () => {
      const FILES = 24;
      for (let i = 0; i < FILES; i++) await root.put(`c/f${i}.txt`, `v1 ${i}`);
      const n = await node();
      await n.scan();
      await sleep(20); // another mtime
      for (let i = 0; i < FILES; i++) await root.put(`c/f${i}.txt`, `v2 changed ${i}`);
      // Planned against serialVersion 1, then made private before the batch is committed.
      const gate = hold('apply');
      const scan = n.scan({ pause: gate.pause });
      let planned: string[];
      try {
        planned = await heldAt(gate, scan);
        expect(planned.length).toBeGreaterThan(0);
        for (const key of planned) await n.setAccess(pid(key), PRIVATE);
      } finally {
        gate.release();
      }
      expect(await scan).toMatchObject({ added: 0, changed: FILES, removed: 0 });
      for (let i = 0; i < FILES; i++) {
        const key = `c/f${i}.txt`;
        const record = (await n.get(pid(key)))!;
        expect(record.sysmeta.checksum.value, key).toBe(digest(record.sysmeta.checksum.algorithm, `v2 changed ${i}`));
        if (planned.includes(key)) {
          expect(record.sysmeta.accessPolicy, key).toEqual(PRIVATE);
          expect(record.sysmeta.serialVersion, key).toBe(3); // created, made private, rescanned
        }
        expect(await n.events(pid(key)), key).not.toContain('delete');
      }
    });

    it('keeps the record of an entry missing from the listing but back before removal (access kept, never re-created)', async () => {
      await root.put('keep.txt', 'first');
      await root.put('other.txt', 'other');
      const n = await node();
      await n.scan();
      await n.setAccess(pid('keep.txt'), PRIVATE);
      // Replaced by remove-then-write while a scan runs: the listing misses it, removal must look again.
      await root.remove('keep.txt');
      const gate = hold('remove');
      const scan = n.scan({ pause: gate.pause });
      try {
        await heldAt(gate, scan);
        await sleep(20);
        await root.put('keep.txt', 'second version');
      } finally {
        gate.release();
      }
      expect(await scan).toMatchObject({ removed: 0 });
      expect((await n.get(pid('keep.txt')))?.sysmeta.accessPolicy).toEqual(PRIVATE);
      expect(await n.scan()).toMatchObject({ added: 0, changed: 1, removed: 0 });
      const record = (await n.get(pid('keep.txt')))!;
      expect(record.sysmeta.checksum.value).toBe(digest(record.sysmeta.checksum.algorithm, 'second version'));
      expect(record.sysmeta.accessPolicy).toEqual(PRIVATE);
      expect(await n.events(pid('keep.txt'))).toEqual(['create', 'update']);
    });

    it('two scanners mid-scan at once (no lease) while files change and objects are made private lose nothing and publish nothing', async () => {
      const FILES = 48;
      const key = (i: number) => `d/f${String(i).padStart(2, '0')}.txt`;
      const content = new Map<string, string>();
      const write = async (k: string, bytes: string) => {
        await root.put(k, bytes);
        content.set(k, bytes);
      };
      for (let i = 0; i < FILES; i++) await write(key(i), `v1 ${i}`);
      const [a, b] = [await node(), await node()];
      await a.scan();
      await sleep(20); // another mtime
      for (let i = 0; i < FILES; i += 2) await write(key(i), `v2 changed ${i}`);
      const hashed = new Map(content);

      // Both scanners plan their first batch against the records as they are, then wait together.
      const [ga, gb] = [hold('apply'), hold('apply')];
      const scans = [a.scan({ lease: false, pause: ga.pause }), b.scan({ lease: false, pause: gb.pause })];
      const privates = new Set<string>();
      const rewritten: string[] = [];
      try {
        const [ka, kb] = [await heldAt(ga, scans[0]!), await heldAt(gb, scans[1]!)];
        const both = ka.filter((k) => kb.includes(k));
        // Made private while both hold a plan of it (each must lose the compare-and-set and
        // plan again), plus one object neither has planned yet.
        for (const k of new Set([...ka, ...kb, key(FILES - 2)])) privates.add(k);
        for (const k of privates) await a.setAccess(pid(k), PRIVATE);
        // Changed again after being hashed and before being applied.
        for (const k of both.filter((_, i) => i % 2 === 0)) {
          await write(k, `v3 after hashing ${k}`);
          rewritten.push(k);
        }
      } finally {
        ga.release();
        gb.release();
      }
      const results = await Promise.all(scans);
      expect(results.map((r) => r.removed)).toEqual([0, 0]);

      // Right after the race: nothing lost, nothing re-created, every change in, access kept.
      for (let i = 0; i < FILES; i++) {
        const k = key(i);
        const record = await a.get(pid(k));
        expect(record, k).toBeDefined();
        const events = await a.events(pid(k));
        expect(events, k).not.toContain('delete');
        expect(events.filter((e) => e === 'create'), k).toEqual(['create']);
        const { algorithm, value } = record!.sysmeta.checksum;
        const expected = rewritten.includes(k) ? [hashed.get(k)!, content.get(k)!] : [content.get(k)!];
        expect(expected.map((bytes) => digest(algorithm, bytes)), k).toContain(value);
        if (privates.has(k)) expect(record!.sysmeta.accessPolicy, k).toEqual(PRIVATE);
        else expect(record!.sysmeta.accessPolicy, k).not.toEqual(PRIVATE);
      }

      // One more scan: the files changed during the race are in as well.
      await b.scan();
      for (let i = 0; i < FILES; i++) {
        const k = key(i);
        const record = (await b.get(pid(k)))!;
        expect(record.sysmeta.checksum.value, k).toBe(digest(record.sysmeta.checksum.algorithm, content.get(k)!));
        if (privates.has(k)) expect(record.sysmeta.accessPolicy, k).toEqual(PRIVATE);
        expect((await b.events(pid(k))).filter((e) => e === 'create' || e === 'delete'), k).toEqual(['create']);
      }
    });
  });
}
