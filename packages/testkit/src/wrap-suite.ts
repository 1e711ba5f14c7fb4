import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccessPolicy, ObjectRecord } from '@memberkit/types';

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

/** One node process over the root: its own connections to the one shared catalogue. */
export interface WrapNode {
  /** One scan; `lease: false` scans without taking the root's lease (to race on purpose). */
  scan(options?: { lease?: boolean }): Promise<WrapScanResult>;
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

    it('lets one scanner at a time scan a root: a second scanner skips while the lease is held', async () => {
      for (let i = 0; i < 40; i++) await root.put(`f${i}.txt`, `file ${i}`);
      const [a, b] = [await node(), await node()];
      const [ra, rb] = await Promise.all([a.scan(), b.scan()]);
      const ran = [ra, rb].filter((r) => r.leased !== false);
      expect(ran.length).toBeGreaterThanOrEqual(1);
      expect(ran.reduce((s, r) => s + r.added, 0)).toBe(40);
      for (let i = 0; i < 40; i++) expect(await a.get(pid(`f${i}.txt`))).toBeDefined();
    });

    it('two scanners racing (no lease) while files change and objects are made private lose nothing and publish nothing', async () => {
      const FILES = 60;
      for (let i = 0; i < FILES; i++) await root.put(`d/f${i}.txt`, `v1 ${i}`);
      const [a, b] = [await node(), await node()];
      await a.scan();
      const privateKeys = Array.from({ length: FILES / 3 }, (_, i) => `d/f${i * 3}.txt`);
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < FILES; i += 2) await root.put(`d/f${i}.txt`, `v2 changed ${i}`);
      const racing = Promise.all([a.scan({ lease: false }), b.scan({ lease: false })]);
      for (const key of privateKeys) await a.setAccess(pid(key), PRIVATE);
      await racing;
      // Once more each: every change is in, whatever the interleaving.
      await a.scan({ lease: false });
      await b.scan({ lease: false });
      for (let i = 0; i < FILES; i++) {
        const key = `d/f${i}.txt`;
        const record = await a.get(pid(key));
        expect(record, key).toBeDefined();
        expect(record!.sysmeta.size, key).toBe(Buffer.byteLength(i % 2 === 0 ? `v2 changed ${i}` : `v1 ${i}`));
        expect(await a.events(pid(key)), key).not.toContain('delete');
      }
      for (const key of privateKeys) expect((await b.get(pid(key)))!.sysmeta.accessPolicy, key).toEqual(PRIVATE);
    });
  });
}
