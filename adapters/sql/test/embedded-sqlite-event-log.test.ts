import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdapterError, type AdapterErrorKind, type EventQuery, type EventRecord, type ObjectRecord, type StoredEvent } from '@memberkit/types';
import { openEmbeddedStore as openSqliteStore, type EmbeddedStore as SqliteStore } from './helpers/embedded-store.js';
import { prefixUpperBound } from '@memberkit/types';

let dir: string;
let file: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memberkit-sqlite-events-'));
  file = join(dir, 'node.db');
});

afterEach(async () => {
  for (const store of stores.splice(0)) while (store.isOpen) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openStore(): Promise<SqliteStore> {
  const store = openSqliteStore({ file });
  stores.push(store);
  await store.open();
  return store;
}

const T0 = Date.UTC(2024, 5, 1);

function event(identifier: string, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    identifier,
    ipAddress: '192.0.2.1',
    userAgent: 'curl/8.0',
    subject: 'public',
    event: 'read',
    dateLogged: new Date(T0),
    nodeIdentifier: 'urn:node:TEST',
    ...overrides,
  };
}

function object(pid: string, readers: string[]): ObjectRecord {
  return {
    storageKey: pid,
    isReplica: false,
    sysmeta: {
      identifier: pid,
      serialVersion: 1,
      formatId: 'text/csv',
      size: 1,
      checksum: { algorithm: 'MD5', value: 'x' },
      submitter: 'CN=s',
      rightsHolder: 'CN=owner',
      archived: false,
      dateUploaded: new Date(T0),
      dateSysMetadataModified: new Date(T0),
      replica: [],
      accessPolicy: readers.length > 0 ? { allow: [{ subject: readers, permission: ['read'] }] } : undefined,
    },
  };
}

async function expectKind(promise: Promise<unknown>, kind: AdapterErrorKind): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(AdapterError.is(error, kind), `expected AdapterError '${kind}', got ${String(error)}`).toBe(true);
}

const q = (query: Partial<EventQuery> = {}): EventQuery => ({ start: 0, count: 1000, ...query });
const idsOf = (entries: StoredEvent[]): string[] => entries.map((e) => e.identifier);

describe('SqliteEventLog append / query', () => {
  it('round-trips every field and gives increasing string entryIds', async () => {
    const store = await openStore();
    const first = event('doi:10.1/a?b#c', { ipAddress: '2001:db8::1', userAgent: 'Mozilla/5.0 (ü)', subject: 'CN=Jane,DC=example', event: 'create', dateLogged: new Date(T0 - 1234) });
    await store.eventLog.append([first, event('second')]);
    await store.eventLog.append([event('third')]);
    const { total, entries } = await store.eventLog.query(q());
    expect(total).toBe(3);
    expect(entries[0]).toEqual({ ...first, entryId: entries[0]?.entryId });
    expect(entries[0]?.dateLogged).toBeInstanceOf(Date);
    for (const e of entries) expect(e.entryId).toMatch(/^[1-9][0-9]*$/);
    const numeric = entries.map((e) => Number(e.entryId));
    expect(new Set(numeric).size).toBe(3);
    // same dateLogged: insertion order
    expect(idsOf(entries.slice(1))).toEqual(['second', 'third']);
    expect(numeric[2]).toBeGreaterThan(numeric[1] as number);
  });

  it('orders by dateLogged then entryId, whatever the insertion order', async () => {
    const store = await openStore();
    await store.eventLog.append([event('late', { dateLogged: new Date(T0 + 2000) }), event('early', { dateLogged: new Date(T0) }), event('mid-1', { dateLogged: new Date(T0 + 1000) })]);
    await store.eventLog.append([event('mid-2', { dateLogged: new Date(T0 + 1000) })]);
    const { entries } = await store.eventLog.query(q());
    expect(idsOf(entries)).toEqual(['early', 'mid-1', 'mid-2', 'late']);
    const sorted = [...entries].sort((a, b) => a.dateLogged.getTime() - b.dateLogged.getTime() || Number(a.entryId) - Number(b.entryId));
    expect(entries).toEqual(sorted);
  });

  it('appends a batch atomically', async () => {
    const store = await openStore();
    await expectKind(store.eventLog.append([event('ok'), event('bad', { dateLogged: new Date(Number.NaN) })]), 'invalid');
    expect((await store.eventLog.query(q({ count: 0 }))).total).toBe(0);
    await store.eventLog.append([]);
    expect((await store.eventLog.query(q({ count: 0 }))).total).toBe(0);
  });

  it('appends large batches in one transaction', async () => {
    const store = await openStore();
    const batch = Array.from({ length: 5000 }, (_, i) => event(`pid-${i}`, { dateLogged: new Date(T0 + i) }));
    await store.eventLog.append(batch);
    const { total, entries } = await store.eventLog.query(q({ start: 4990, count: 100 }));
    expect(total).toBe(5000);
    expect(idsOf(entries)).toEqual(batch.slice(4990).map((e) => e.identifier));
  });

  it('filters by fromDate (inclusive), toDate (exclusive) and events', async () => {
    const store = await openStore();
    await store.eventLog.append([
      event('a', { dateLogged: new Date(T0), event: 'create' }),
      event('b', { dateLogged: new Date(T0 + 1), event: 'read' }),
      event('c', { dateLogged: new Date(T0 + 2), event: 'update' }),
      event('d', { dateLogged: new Date(T0 + 3), event: 'read' }),
      event('e', { dateLogged: new Date(T0 + 4), event: 'synchronization_failed' }),
    ]);
    expect(idsOf((await store.eventLog.query(q({ fromDate: new Date(T0 + 1), toDate: new Date(T0 + 3) }))).entries)).toEqual(['b', 'c']);
    expect(idsOf((await store.eventLog.query(q({ fromDate: new Date(T0 + 4) }))).entries)).toEqual(['e']);
    expect((await store.eventLog.query(q({ toDate: new Date(T0) }))).total).toBe(0);
    expect(idsOf((await store.eventLog.query(q({ events: ['read'] }))).entries)).toEqual(['b', 'd']);
    expect(idsOf((await store.eventLog.query(q({ events: ['read', 'create', 'no-such'] }))).entries)).toEqual(['a', 'b', 'd']);
    expect(await store.eventLog.query(q({ events: [] }))).toEqual({ total: 0, entries: [] });
    expect(idsOf((await store.eventLog.query(q({ events: ['read'], fromDate: new Date(T0 + 2) }))).entries)).toEqual(['d']);
  });

  it('slices with start/count, exact total, count 0 returns only the total', async () => {
    const store = await openStore();
    await store.eventLog.append(Array.from({ length: 25 }, (_, i) => event(`p${i}`, { dateLogged: new Date(T0 + i), event: i % 2 ? 'read' : 'create' })));
    const page = await store.eventLog.query({ events: ['read'], start: 5, count: 3 });
    expect(page.total).toBe(12);
    expect(idsOf(page.entries)).toEqual(['p11', 'p13', 'p15']);
    expect(await store.eventLog.query({ start: 0, count: 0 })).toEqual({ total: 25, entries: [] });
    expect(await store.eventLog.query({ start: 25, count: 10 })).toEqual({ total: 25, entries: [] });
    await expectKind(store.eventLog.query({ start: -1, count: 1 }), 'invalid');
    await expectKind(store.eventLog.query({ start: 0, count: 1.5 }), 'invalid');
  });
});

describe('SqliteEventLog idPrefix', () => {
  const identifiers = [
    'abc',
    'abd',
    'ab',
    'a',
    'b',
    'ABC',
    'ab%',
    'ab%c',
    'ab_c',
    'abXc',
    'ab\\c',
    "ab'c",
    'doi:10.5063/F1',
    'doi:10.5063/F1%2FAB',
    'doi:10.5063/F2',
    'café',
    'cafe\u0301',
    'caff',
    'cafë',
    'naïve',
    '数据',
    '数据集',
    '数',
    '\uffff',
    '\uffffz',
    '\ud7ff',
    '\ud7ffa',
    '\ue000',
    '🧪',
    '🧪x',
    '🧫',
    '\u{10FFFF}',
    '\u{10FFFF}a',
    'a\u{10FFFF}',
    'a\u{10FFFF}b',
    'b\u{10FFFF}',
    '',
    'x'.repeat(800),
    'x'.repeat(799) + 'y',
  ];
  const prefixes = [
    'a',
    'ab',
    'ab%',
    'ab_',
    'ab\\',
    "ab'",
    'A',
    'doi:10.5063/F1',
    'caf',
    'café',
    'cafe',
    '数',
    '数据',
    '\uffff',
    '\ud7ff',
    '🧪',
    '\ud83e', // a lone high surrogate: matches nothing stored
    '\u{10FFFF}',
    'a\u{10FFFF}',
    'x'.repeat(799),
    'x'.repeat(800),
    'zzz',
  ];

  it('matches exactly the identifiers that start with the prefix (code point-wise)', async () => {
    const store = await openStore();
    await store.eventLog.append(identifiers.map((id, i) => event(id, { dateLogged: new Date(T0 + i) })));
    for (const prefix of prefixes) {
      const want = identifiers.filter((id) => id.startsWith(prefix) && !/[\ud800-\udfff]$/u.test(prefix));
      const { total, entries } = await store.eventLog.query(q({ idPrefix: prefix }));
      expect(idsOf(entries), JSON.stringify(prefix)).toEqual(want);
      expect(total).toBe(want.length);
    }
    expect((await store.eventLog.query(q({ idPrefix: '' }))).total).toBe(identifiers.length);
  });

  it('combines idPrefix with the other filters', async () => {
    const store = await openStore();
    await store.eventLog.append([
      event('urn:a:1', { event: 'read', dateLogged: new Date(T0) }),
      event('urn:a:2', { event: 'create', dateLogged: new Date(T0 + 1) }),
      event('urn:b:1', { event: 'read', dateLogged: new Date(T0 + 2) }),
      event('urn:a:3', { event: 'read', dateLogged: new Date(T0 + 3) }),
    ]);
    const page = await store.eventLog.query({ idPrefix: 'urn:a:', events: ['read'], fromDate: new Date(T0), start: 1, count: 5 });
    expect(page.total).toBe(2);
    expect(idsOf(page.entries)).toEqual(['urn:a:3']);
  });

  it('computes the exclusive upper bound of a prefix', () => {
    expect(prefixUpperBound('abc')).toBe('abd');
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('\u{10FFFF}\u{10FFFF}')).toBeUndefined();
    expect(prefixUpperBound('\ud7ff')).toBe('\ue000'); // skips the surrogate range
    expect(prefixUpperBound('\uffff')).toBe('\u{10000}');
    expect(prefixUpperBound('🧪')).toBe('🧫');
    expect(prefixUpperBound('')).toBeUndefined();
  });
});

describe('SqliteEventLog readableBy (joins the catalogue)', () => {
  it('returns only entries about objects one of the subjects may read; hides removed objects', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [object('open', ['public']), object('closed', []), object('shared', ['CN=friend']), object('gone', ['public'])] });
    await store.eventLog.append(['open', 'closed', 'shared', 'gone', 'never-catalogued'].map((id, i) => event(id, { dateLogged: new Date(T0 + i) })));
    const readable = async (subjects: string[]): Promise<string[]> => idsOf((await store.eventLog.query(q({ readableBy: subjects }))).entries);
    expect(await readable(['public'])).toEqual(['open', 'gone']);
    expect(await readable(['CN=friend'])).toEqual(['shared']);
    expect(await readable(['CN=owner'])).toEqual(['open', 'closed', 'shared', 'gone']);
    expect(await readable(['public', 'CN=friend'])).toEqual(['open', 'shared', 'gone']);
    expect(await readable([])).toEqual([]);
    await store.catalogue.apply({ remove: [{ pid: 'gone' }] });
    expect(await readable(['public'])).toEqual(['open']);
    expect((await store.eventLog.query(q({ readableBy: ['public'], count: 0 }))).total).toBe(1);
    // unfiltered: everything, including entries of removed or never-catalogued objects
    expect((await store.eventLog.query(q())).total).toBe(5);
  });

  it('follows access changes made by replace', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [object('p', [])] });
    await store.eventLog.append([event('p')]);
    expect((await store.eventLog.query(q({ readableBy: ['public'] }))).total).toBe(0);
    const next = object('p', ['public']).sysmeta;
    await store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: { ...next, serialVersion: 2 } }] });
    expect((await store.eventLog.query(q({ readableBy: ['public'] }))).total).toBe(1);
  });

  it('gives the same answer for shallow and deep offsets', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [object('pub', ['public']), object('priv', [])] });
    const n = 10_100;
    await store.eventLog.append(Array.from({ length: n }, (_, i) => event(i % 2 ? 'pub' : 'priv', { dateLogged: new Date(T0 + (n - i)) })));
    const all = (await store.eventLog.query({ start: 0, count: n })).entries;
    const want = all.filter((e) => e.identifier === 'pub');
    const shallow = await store.eventLog.query({ readableBy: ['public'], start: 5000 - 10, count: 10 });
    expect(shallow.total).toBe(want.length);
    expect(shallow.entries).toEqual(want.slice(4990, 5000));
    const deepAll = await store.eventLog.query({ readableBy: ['CN=owner'], start: 10_050, count: 100 });
    expect(deepAll.total).toBe(n);
    expect(deepAll.entries).toEqual(all.slice(10_050));
  });
});

describe('SqliteEventLog across connections (second process view)', () => {
  it("sees another store's entries; entryIds stay unique and increasing", async () => {
    const a = await openStore();
    const b = await openStore();
    await a.eventLog.append([event('from-a')]);
    await b.eventLog.append([event('from-b')]);
    await a.eventLog.append([event('from-a-2')]);
    const fromA = await a.eventLog.query(q());
    const fromB = await b.eventLog.query(q());
    expect(fromA).toEqual(fromB);
    expect(idsOf(fromA.entries)).toEqual(['from-a', 'from-b', 'from-a-2']);
    const ids = fromA.entries.map((e) => Number(e.entryId));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(3);
  });

  it('never reuses an entryId, also after the newest entries are deleted', async () => {
    const store = await openStore();
    await store.eventLog.append([event('x'), event('y')]);
    const before = (await store.eventLog.query(q())).entries.map((e) => Number(e.entryId));
    store.database.exec('DELETE FROM mk_events');
    await store.eventLog.append([event('z')]);
    const after = (await store.eventLog.query(q())).entries.map((e) => Number(e.entryId));
    expect(after[0]).toBeGreaterThan(Math.max(...before));
  });
});
