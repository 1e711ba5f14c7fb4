import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exercisePositionIndex } from '@memberkit/testkit';
import { AdapterError, type AdapterErrorKind, type ObjectRecord, type StoredSystemMetadata } from '@memberkit/types';
import { migrations, dialectSql, toAdapterError } from '../src/index.js';
import { openEmbeddedStore as openSqliteStore, type EmbeddedStore as SqliteStore } from './helpers/embedded-store.js';

let dir: string;
let file: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memberkit-sqlite-catalogue-'));
  file = join(dir, 'node.db');
});

afterEach(async () => {
  for (const store of stores.splice(0)) while (store.isOpen) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openStore(options: { busyTimeoutMs?: number; positionBucketRows?: number } = {}): Promise<SqliteStore> {
  const store = openSqliteStore({ file, ...options });
  stores.push(store);
  await store.open();
  return store;
}

const T0 = Date.UTC(2024, 0, 1);

function sysmeta(pid: string, overrides: Partial<StoredSystemMetadata> = {}): StoredSystemMetadata {
  return {
    identifier: pid,
    serialVersion: 1,
    formatId: 'text/csv',
    size: 42,
    checksum: { algorithm: 'SHA-256', value: 'ab'.repeat(32) },
    submitter: 'CN=submitter,DC=example',
    rightsHolder: 'CN=owner,DC=example',
    archived: false,
    dateUploaded: new Date(T0),
    dateSysMetadataModified: new Date(T0),
    replica: [],
    ...overrides,
  };
}

function record(pid: string, overrides: Partial<StoredSystemMetadata> = {}, isReplica = false): ObjectRecord {
  return { sysmeta: sysmeta(pid, overrides), storageKey: `objects/${pid.length}/${encodeURIComponent(pid).slice(0, 50)}`, isReplica };
}

async function expectKind(promise: Promise<unknown>, kind: AdapterErrorKind): Promise<AdapterError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(AdapterError.is(error), `expected an AdapterError '${kind}', got ${String(error)}`).toBe(true);
  expect((error as AdapterError).kind).toBe(kind);
  return error as AdapterError;
}

const HOSTILE_PIDS = [
  'a/../b',
  '../x',
  'a/../../b',
  '/etc/passwd',
  'C:\\windows\\path',
  '%2F',
  'doi:10.5063/F1%2FAB?x=1#frag',
  '?#',
  'with space and\ttab',
  "quote'\"`;--",
  'café', // NFC
  'cafe\u0301', // NFD twin
  '数据集/第一版',
  'emoji 🧪📦',
  '\u{10FFFF}',
  'x'.repeat(800),
  'ü'.repeat(800),
];

describe('SqliteStore lifecycle', () => {
  it('does no I/O before open(), creates the file on open()', async () => {
    const store = openSqliteStore({ file });
    stores.push(store);
    expect(existsSync(file)).toBe(false);
    expect(store.isOpen).toBe(false);
    await expectKind(store.catalogue.get('x'), 'unavailable');
    await expectKind(store.eventLog.query({ start: 0, count: 1 }), 'unavailable');
    await store.open();
    expect(existsSync(file)).toBe(true);
  });

  it('sets WAL and records the schema version', async () => {
    const store = await openStore({ busyTimeoutMs: 1234 });
    const db = store.database;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((db.prepare('SELECT max(version) AS v FROM mk_migrations').get() as { v: number }).v).toBe(migrations(dialectSql('sqlite')).length);
  });

  it('migrates once; reopening keeps the data', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('kept')] });
    await store.close();
    const again = await openStore();
    expect((again.database.prepare('SELECT count(*) AS n FROM mk_migrations').get() as { n: number }).n).toBe(migrations(dialectSql('sqlite')).length);
    expect((await again.catalogue.get('kept'))?.sysmeta.identifier).toBe('kept');
  });

  it("refuses a schema newer than it knows with 'internal'", async () => {
    const store = await openStore();
    store.database.prepare('INSERT INTO mk_migrations (version, applied) VALUES (?, 0)').run(migrations(dialectSql('sqlite')).length + 1);
    await store.close();
    const newer = openSqliteStore({ file });
    stores.push(newer);
    const error = await expectKind(newer.open(), 'internal');
    expect(error.message).toMatch(/newer/);
    expect(newer.isOpen).toBe(false);
  });

  it('reference-counts open/close across the store, catalogue and event log', async () => {
    const store = openSqliteStore({ file });
    stores.push(store);
    await store.catalogue.open();
    await store.eventLog.open();
    await store.catalogue.close();
    expect(store.isOpen).toBe(true);
    expect(await store.catalogue.get('nothing')).toBeUndefined();
    await store.eventLog.close();
    expect(store.isOpen).toBe(false);
    await store.close(); // extra close is a no-op
    await store.open();
    expect(store.isOpen).toBe(true);
  });

  it("declares the write capability", async () => {
    const store = await openStore();
    expect(store.catalogue.capabilities.write).toBe(true);
  });

  it("works on ':memory:'", async () => {
    const store = openSqliteStore({ file: ':memory:' });
    stores.push(store);
    await store.open();
    await store.catalogue.apply({ insert: [record('m')] });
    expect((await store.catalogue.list({ start: 0, count: 10 })).total).toBe(1);
  });

  it('reports a file in a missing directory as an AdapterError naming the file', async () => {
    const missing = join(dir, 'missing-dir', 'x.db');
    const store = openSqliteStore({ file: missing });
    stores.push(store);
    const error = await expectKind(store.open(), 'internal'); // a configuration error, not transient
    expect(error.message).toContain(missing);
    expect(store.isOpen).toBe(false);
  });
});

describe('SqliteCatalogue get / insert', () => {
  it('round-trips every system metadata field, the storage key and isReplica', async () => {
    const store = await openStore();
    const full: StoredSystemMetadata = {
      serialVersion: 7,
      identifier: 'doi:10.5063/AA/full.1',
      formatId: 'eml://ecoinformatics.org/eml-2.1.1',
      size: 9_007_199_254_740, // large, still exact
      checksum: { algorithm: 'MD5', value: 'd41d8cd98f00b204e9800998ecf8427e' },
      submitter: 'CN=Jane,O=Org,DC=example',
      rightsHolder: 'http://orcid.org/0000-0002-1825-0097',
      accessPolicy: {
        allow: [
          { subject: ['public'], permission: ['read'] },
          { subject: ['CN=editors,DC=example', 'CN=Bob'], permission: ['read', 'write', 'changePermission'] },
        ],
      },
      replicationPolicy: { replicationAllowed: true, numberReplicas: 2, preferredMemberNode: ['urn:node:A'], blockedMemberNode: ['urn:node:B'] },
      obsoletes: 'doi:10.5063/AA/full.0',
      obsoletedBy: 'doi:10.5063/AA/full.2',
      archived: true,
      dateUploaded: new Date('2020-02-03T04:05:06.789Z'),
      dateSysMetadataModified: new Date('2021-03-04T05:06:07.891Z'),
      originMemberNode: 'urn:node:ORIGIN',
      authoritativeMemberNode: 'urn:node:AUTH',
      replica: [
        { replicaMemberNode: 'urn:node:ORIGIN', replicationStatus: 'completed', replicaVerified: new Date('2020-02-03T04:05:07.000Z') },
        { replicaMemberNode: 'urn:node:R2', replicationStatus: 'queued', replicaVerified: new Date('2022-01-01T00:00:00.001Z') },
      ],
      seriesId: 'urn:uuid:series-α',
      mediaType: { name: 'text/xml', property: [{ name: 'charset', value: 'utf-8' }] },
      fileName: '2020-01-01T00:00:00.000Z', // looks like a date, MUST stay a string
    };
    const rec: ObjectRecord = { sysmeta: full, storageKey: 'a/b/c.bin', isReplica: true };
    await store.catalogue.apply({ insert: [rec] });
    const got = await store.catalogue.get(full.identifier);
    expect(got).toEqual(rec);
    expect(got?.sysmeta.dateUploaded).toBeInstanceOf(Date);
    expect(got?.sysmeta.dateSysMetadataModified).toBeInstanceOf(Date);
    expect(got?.sysmeta.replica[0]?.replicaVerified).toBeInstanceOf(Date);
    expect(typeof got?.sysmeta.fileName).toBe('string');
    expect(got?.sysmeta.checksum.value).toBe('d41d8cd98f00b204e9800998ecf8427e');
    // a returned record is a copy: mutating it does not change the store
    got!.sysmeta.formatId = 'mutated';
    expect((await store.catalogue.get(full.identifier))?.sysmeta.formatId).toBe(full.formatId);
  });

  it('leaves optional fields absent when they were absent', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('minimal')] });
    const got = await store.catalogue.get('minimal');
    for (const key of ['accessPolicy', 'replicationPolicy', 'obsoletes', 'obsoletedBy', 'seriesId', 'mediaType', 'fileName', 'originMemberNode']) {
      expect(Object.hasOwn(got!.sysmeta, key), key).toBe(false);
    }
    expect(got?.isReplica).toBe(false);
  });

  it('returns undefined for an absent PID', async () => {
    const store = await openStore();
    expect(await store.catalogue.get('absent')).toBeUndefined();
    expect(await store.catalogue.identifierUse('absent')).toBeUndefined();
    expect(await store.catalogue.seriesMembers('absent')).toEqual([]);
  });

  it('stores hostile identifiers verbatim (no normalisation, no path handling)', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: HOSTILE_PIDS.map((pid, i) => record(pid, { seriesId: `sid:${pid}`, dateSysMetadataModified: new Date(T0 + i) })) });
    for (const pid of HOSTILE_PIDS) {
      const got = await store.catalogue.get(pid);
      expect(got?.sysmeta.identifier, pid).toBe(pid);
      expect(got?.sysmeta.seriesId).toBe(`sid:${pid}`);
      expect(await store.catalogue.identifierUse(pid)).toBe('pid');
      expect(await store.catalogue.identifierUse(`sid:${pid}`)).toBe('sid');
      const page = await store.catalogue.list({ identifier: pid, start: 0, count: 10 });
      expect(page.items.map((r) => r.sysmeta.identifier)).toEqual([pid]);
    }
    // NFC and NFD twins are different identifiers
    expect((await store.catalogue.get('café'))?.sysmeta.identifier).toBe('café');
    expect((await store.catalogue.get('cafe\u0301'))?.sysmeta.identifier).toBe('cafe\u0301');
    expect(await store.catalogue.get('a/b')).toBeUndefined();
    expect(await store.catalogue.get('/')).toBeUndefined();
    const all = await store.catalogue.list({ start: 0, count: 100 });
    expect(all.items.map((r) => r.sysmeta.identifier)).toEqual(HOSTILE_PIDS);
  });

  it("rejects invalid input with 'invalid'", async () => {
    const store = await openStore();
    await expectKind(store.catalogue.apply({ insert: [record('')] }), 'invalid');
    await expectKind(store.catalogue.apply({ insert: [record('bad-date', { dateSysMetadataModified: new Date(Number.NaN) })] }), 'invalid');
    await expectKind(store.catalogue.apply({ insert: [record('bad-date2', { dateUploaded: 'yesterday' as unknown as Date })] }), 'invalid');
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(0);
  });
});

describe('SqliteCatalogue identifier rules', () => {
  it("refuses a PID already in use as a PID with 'already-exists'", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p1')] });
    await expectKind(store.catalogue.apply({ insert: [record('p1', { formatId: 'other' })] }), 'already-exists');
    expect((await store.catalogue.get('p1'))?.sysmeta.formatId).toBe('text/csv');
  });

  it("refuses a PID already in use as a SID with 'already-exists'", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p1', { seriesId: 's1' })] });
    await expectKind(store.catalogue.apply({ insert: [record('s1')] }), 'already-exists');
    expect(await store.catalogue.get('s1')).toBeUndefined();
    expect(await store.catalogue.identifierUse('s1')).toBe('sid');
  });

  it("refuses a seriesId already in use as a PID with 'already-exists'", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p1')] });
    await expectKind(store.catalogue.apply({ insert: [record('p2', { seriesId: 'p1' })] }), 'already-exists');
    expect(await store.catalogue.get('p2')).toBeUndefined();
    expect(await store.catalogue.identifierUse('p2')).toBeUndefined();
  });

  it("refuses a record whose seriesId equals its own PID", async () => {
    const store = await openStore();
    await expectKind(store.catalogue.apply({ insert: [record('same', { seriesId: 'same' })] }), 'already-exists');
    expect(await store.catalogue.identifierUse('same')).toBeUndefined();
  });

  it('lets several objects share a seriesId', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('v1', { seriesId: 'S', dateUploaded: new Date(T0 + 1) })] });
    await store.catalogue.apply({ insert: [record('v2', { seriesId: 'S', obsoletes: 'v1', dateUploaded: new Date(T0 + 2) })] });
    await store.catalogue.apply({ insert: [record('v0', { seriesId: 'S', obsoletedBy: 'v1', dateUploaded: new Date(T0) })] });
    expect(await store.catalogue.identifierUse('S')).toBe('sid');
    expect(await store.catalogue.seriesMembers('S')).toEqual([
      { pid: 'v0', obsoletedBy: 'v1', dateUploaded: new Date(T0) },
      { pid: 'v1', dateUploaded: new Date(T0 + 1) },
      { pid: 'v2', obsoletes: 'v1', dateUploaded: new Date(T0 + 2) },
    ]);
  });

  it('applies the rules between records of the same change', async () => {
    const store = await openStore();
    await expectKind(store.catalogue.apply({ insert: [record('a', { seriesId: 'S' }), record('S')] }), 'already-exists');
    await expectKind(store.catalogue.apply({ insert: [record('a'), record('b', { seriesId: 'a' })] }), 'already-exists');
    await expectKind(store.catalogue.apply({ insert: [record('a'), record('a')] }), 'already-exists');
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(0);
    expect(await store.catalogue.identifierUse('a')).toBeUndefined();
    expect(await store.catalogue.identifierUse('S')).toBeUndefined();
  });

  it('is atomic: when the second insert fails the first is not inserted', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('existing', { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } })] });
    await expectKind(
      store.catalogue.apply({
        insert: [record('first', { seriesId: 'newSeries', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } }), record('existing')],
      }),
      'already-exists',
    );
    expect(await store.catalogue.get('first')).toBeUndefined();
    expect(await store.catalogue.identifierUse('first')).toBeUndefined();
    expect(await store.catalogue.identifierUse('newSeries')).toBeUndefined();
    expect((await store.catalogue.list({ readableBy: ['public'], start: 0, count: 10 })).total).toBe(1);
    const accessRows = store.database.prepare('SELECT count(*) AS n FROM mk_access').get() as { n: number };
    expect(accessRows.n).toBe(2); // rightsHolder + public of 'existing' only
  });

  it('frees the identifiers of removed objects', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p1', { seriesId: 'S' }), record('p2', { seriesId: 'S' })] });
    await store.catalogue.apply({ remove: [{ pid: 'p1' }] });
    expect(await store.catalogue.identifierUse('p1')).toBeUndefined();
    expect(await store.catalogue.identifierUse('S')).toBe('sid'); // p2 still carries it
    await store.catalogue.apply({ remove: [{ pid: 'p2' }] });
    expect(await store.catalogue.identifierUse('S')).toBeUndefined();
    await store.catalogue.apply({ insert: [record('S'), record('p1')] });
    expect(await store.catalogue.identifierUse('S')).toBe('pid');
  });
});

describe('SqliteCatalogue replace / remove', () => {
  it('replaces with compare-and-set on serialVersion, keeping the storage key', async () => {
    const store = await openStore();
    const original = record('p', { seriesId: 'S1' });
    await store.catalogue.apply({ insert: [original] });
    const next = sysmeta('p', { serialVersion: 2, obsoletedBy: 'q', formatId: 'text/plain', dateSysMetadataModified: new Date(T0 + 5000), seriesId: 'S1' });
    await store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: next }] });
    const got = await store.catalogue.get('p');
    expect(got).toEqual({ sysmeta: next, storageKey: original.storageKey, isReplica: false });
    const listed = await store.catalogue.list({ formatId: 'text/plain', fromDate: new Date(T0 + 5000), start: 0, count: 10 });
    expect(listed.items.map((r) => r.sysmeta.identifier)).toEqual(['p']);
    expect((await store.catalogue.list({ formatId: 'text/csv', start: 0, count: 0 })).total).toBe(0);
  });

  it("fails with 'conflict' when serialVersion changed, and changes nothing", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p', { serialVersion: 3 })] });
    await expectKind(store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 2, sysmeta: sysmeta('p', { serialVersion: 4, formatId: 'x' }) }] }), 'conflict');
    expect((await store.catalogue.get('p'))?.sysmeta.serialVersion).toBe(3);
    expect((await store.catalogue.get('p'))?.sysmeta.formatId).toBe('text/csv');
  });

  it('lets only one of two writers with the same expected serialVersion win', async () => {
    const store = await openStore();
    const other = await openStore();
    await store.catalogue.apply({ insert: [record('p')] });
    const results = await Promise.allSettled([
      store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { serialVersion: 2, formatId: 'A' }) }] }),
      other.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { serialVersion: 2, formatId: 'B' }) }] }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(AdapterError.is(rejected?.reason, 'conflict')).toBe(true);
  });

  it("fails with 'not-found' when replacing or removing an absent PID", async () => {
    const store = await openStore();
    await expectKind(store.catalogue.apply({ replace: [{ pid: 'nope', expectedSerialVersion: 1, sysmeta: sysmeta('nope') }] }), 'not-found');
    await expectKind(store.catalogue.apply({ remove: [{ pid: 'nope' }] }), 'not-found');
  });

  it("fails with 'invalid' when the replacement's identifier is not the PID", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p')] });
    await expectKind(store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('other') }] }), 'invalid');
  });

  it('follows the insert rule for a seriesId set by the replacement', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p'), record('q', { seriesId: 'S' })] });
    await expectKind(store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { seriesId: 'q' }) }] }), 'already-exists');
    await expectKind(store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { seriesId: 'p' }) }] }), 'already-exists');
    expect((await store.catalogue.get('p'))?.sysmeta.seriesId).toBeUndefined();
    // joining an existing series is fine, leaving one frees the SID when it was the last member
    await store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { serialVersion: 2, seriesId: 'S' }) }] });
    expect((await store.catalogue.seriesMembers('S')).map((m) => m.pid).sort()).toEqual(['p', 'q']);
    await store.catalogue.apply({ replace: [{ pid: 'q', expectedSerialVersion: 1, sysmeta: sysmeta('q', { serialVersion: 2, seriesId: 'T' }) }] });
    await store.catalogue.apply({ replace: [{ pid: 'p', expectedSerialVersion: 2, sysmeta: sysmeta('p', { serialVersion: 3 }) }] });
    expect(await store.catalogue.identifierUse('S')).toBeUndefined();
    expect(await store.catalogue.identifierUse('T')).toBe('sid');
    await store.catalogue.apply({ insert: [record('S')] });
  });

  it('keeps isReplica unless the replacement sets it', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('r', {}, true)] });
    await store.catalogue.apply({ replace: [{ pid: 'r', expectedSerialVersion: 1, sysmeta: sysmeta('r', { serialVersion: 2 }) }] });
    expect((await store.catalogue.get('r'))?.isReplica).toBe(true);
    await store.catalogue.apply({ replace: [{ pid: 'r', expectedSerialVersion: 2, sysmeta: sysmeta('r', { serialVersion: 3 }), isReplica: false }] });
    expect((await store.catalogue.get('r'))?.isReplica).toBe(false);
    expect((await store.catalogue.list({ replicas: false, start: 0, count: 10 })).total).toBe(1);
  });

  it('keeps the access data in step with replace and remove', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p', { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } })] });
    expect((await store.catalogue.list({ readableBy: ['public'], start: 0, count: 10 })).total).toBe(1);
    await store.catalogue.apply({
      replace: [{ pid: 'p', expectedSerialVersion: 1, sysmeta: sysmeta('p', { serialVersion: 2, rightsHolder: 'CN=new', accessPolicy: { allow: [{ subject: ['CN=reader'], permission: ['read'] }] } }) }],
    });
    const readable = async (subject: string): Promise<number> => (await store.catalogue.list({ readableBy: [subject], start: 0, count: 10 })).total;
    expect(await readable('public')).toBe(0);
    expect(await readable('CN=owner,DC=example')).toBe(0);
    expect(await readable('CN=new')).toBe(1);
    expect(await readable('CN=reader')).toBe(1);
    await store.catalogue.apply({ remove: [{ pid: 'p' }] });
    expect(await readable('CN=reader')).toBe(0);
    expect((store.database.prepare('SELECT count(*) AS n FROM mk_access').get() as { n: number }).n).toBe(0);
  });

  it('applies insert + replace (an update) atomically, and rolls both back on a failing remove', async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('v1', { seriesId: 'S' })] });
    const failing = store.catalogue.apply({
      insert: [record('v2', { seriesId: 'S', obsoletes: 'v1', serialVersion: 1 })],
      replace: [{ pid: 'v1', expectedSerialVersion: 1, sysmeta: sysmeta('v1', { seriesId: 'S', obsoletedBy: 'v2', serialVersion: 2 }) }],
      remove: [{ pid: 'not-there' }],
    });
    await expectKind(failing, 'not-found');
    expect(await store.catalogue.get('v2')).toBeUndefined();
    expect((await store.catalogue.get('v1'))?.sysmeta.obsoletedBy).toBeUndefined();
    await store.catalogue.apply({
      insert: [record('v2', { seriesId: 'S', obsoletes: 'v1' })],
      replace: [{ pid: 'v1', expectedSerialVersion: 1, sysmeta: sysmeta('v1', { seriesId: 'S', obsoletedBy: 'v2', serialVersion: 2 }) }],
    });
    expect((await store.catalogue.seriesMembers('S')).map((m) => [m.pid, m.obsoletes, m.obsoletedBy])).toEqual([
      ['v1', undefined, 'v2'],
      ['v2', 'v1', undefined],
    ]);
  });

  it('applies insert, then replace, then remove', async () => {
    const store = await openStore();
    // replace of a record inserted by the same change works; remove sees the inserted record
    await store.catalogue.apply({
      insert: [record('n1'), record('n2')],
      replace: [{ pid: 'n1', expectedSerialVersion: 1, sysmeta: sysmeta('n1', { serialVersion: 2 }) }],
      remove: [{ pid: 'n2' }],
    });
    expect((await store.catalogue.get('n1'))?.sysmeta.serialVersion).toBe(2);
    expect(await store.catalogue.get('n2')).toBeUndefined();
  });

  it('accepts an empty change', async () => {
    const store = await openStore();
    await store.catalogue.apply({});
    await store.catalogue.apply({ insert: [], replace: [], remove: [] });
  });
});

describe('SqliteCatalogue list', () => {
  // 12 objects: dates in 4 groups of 3 equal timestamps, PIDs inserted out of order
  const pids = ['k', 'b', 'j', 'a', 'l', 'c', 'i', 'd', 'h', 'e', 'g', 'f'];
  const fixture = (): ObjectRecord[] =>
    pids.map((pid, i) =>
      record(
        pid,
        {
          dateSysMetadataModified: new Date(T0 + Math.floor(i / 3) * 1000),
          formatId: i % 2 === 0 ? 'eml' : 'csv',
          seriesId: i < 3 ? 'series-1' : undefined,
          rightsHolder: `CN=owner-${i % 3}`,
          accessPolicy:
            i % 4 === 0
              ? { allow: [{ subject: ['public'], permission: ['read'] }] }
              : i % 4 === 1
                ? { allow: [{ subject: ['CN=grp'], permission: ['write'] }, { subject: ['CN=nobody'], permission: [] }] }
                : undefined,
        },
        i % 5 === 0,
      ),
    );
  const expected = (filter: (r: ObjectRecord) => boolean): string[] =>
    fixture()
      .filter(filter)
      .sort((x, y) => x.sysmeta.dateSysMetadataModified.getTime() - y.sysmeta.dateSysMetadataModified.getTime() || (x.sysmeta.identifier < y.sysmeta.identifier ? -1 : 1))
      .map((r) => r.sysmeta.identifier);

  async function loaded(): Promise<SqliteStore> {
    const store = await openStore();
    // In listing order: the catalogue's clock stamps in commit order (never before the
    // previous stamp), so records committed in (date, PID) order keep their order and dates.
    const all = fixture();
    const order = expected(() => true);
    await store.catalogue.apply({ insert: order.map((pid) => all.find((r) => r.sysmeta.identifier === pid)!) });
    return store;
  }
  const ids = (page: { items: ObjectRecord[] }): string[] => page.items.map((r) => r.sysmeta.identifier);

  it('orders by dateSysMetadataModified then PID', async () => {
    const store = await loaded();
    const page = await store.catalogue.list({ start: 0, count: 100 });
    expect(page.total).toBe(12);
    expect(ids(page)).toEqual(expected(() => true));
    expect(ids(page).slice(0, 3)).toEqual(['b', 'j', 'k']);
  });

  it('slices with start/count and reports the total regardless of the slice', async () => {
    const store = await loaded();
    const all = expected(() => true);
    const seen: string[] = [];
    for (let start = 0; start < 12; start += 5) {
      const page = await store.catalogue.list({ start, count: 5 });
      expect(page.total).toBe(12);
      seen.push(...ids(page));
    }
    expect(seen).toEqual(all);
    expect(await store.catalogue.list({ start: 12, count: 5 })).toEqual({ total: 12, items: [] });
    expect(await store.catalogue.list({ start: 1000, count: 5 })).toEqual({ total: 12, items: [] });
    expect(ids(await store.catalogue.list({ start: 10, count: 100 }))).toEqual(all.slice(10));
  });

  it('returns only the total for count 0', async () => {
    const store = await loaded();
    expect(await store.catalogue.list({ start: 0, count: 0 })).toEqual({ total: 12, items: [] });
    expect(await store.catalogue.list({ start: 3, count: 0, formatId: 'eml' })).toEqual({ total: 6, items: [] });
  });

  it("rejects a negative or fractional start/count with 'invalid'", async () => {
    const store = await loaded();
    await expectKind(store.catalogue.list({ start: -1, count: 1 }), 'invalid');
    await expectKind(store.catalogue.list({ start: 0, count: -1 }), 'invalid');
    await expectKind(store.catalogue.list({ start: 0.5, count: 1 }), 'invalid');
  });

  it('filters by fromDate (inclusive) and toDate (exclusive)', async () => {
    const store = await loaded();
    const from = new Date(T0 + 1000);
    const to = new Date(T0 + 3000);
    const page = await store.catalogue.list({ fromDate: from, toDate: to, start: 0, count: 100 });
    expect(ids(page)).toEqual(expected((r) => r.sysmeta.dateSysMetadataModified >= from && r.sysmeta.dateSysMetadataModified < to));
    expect(page.total).toBe(6);
    expect((await store.catalogue.list({ fromDate: new Date(T0 + 3000), start: 0, count: 0 })).total).toBe(3);
    expect((await store.catalogue.list({ toDate: new Date(T0), start: 0, count: 0 })).total).toBe(0);
    // Records committed together at one date share that stamp (one clock floor per transaction).
    expect((await store.catalogue.list({ toDate: new Date(T0 + 1), start: 0, count: 0 })).total).toBe(3);
    expect((await store.catalogue.list({ toDate: new Date(T0 + 1000), start: 0, count: 0 })).total).toBe(3);
  });

  it('filters by formatId, identifier (PID or seriesId) and replicas', async () => {
    const store = await loaded();
    const fmt = await store.catalogue.list({ formatId: 'eml', start: 0, count: 100 });
    expect(ids(fmt)).toEqual(expected((r) => r.sysmeta.formatId === 'eml'));
    expect(ids(await store.catalogue.list({ identifier: 'series-1', start: 0, count: 100 }))).toEqual(['b', 'j', 'k']);
    expect(ids(await store.catalogue.list({ identifier: 'j', start: 0, count: 100 }))).toEqual(['j']);
    expect((await store.catalogue.list({ identifier: 'nothing', start: 0, count: 100 })).total).toBe(0);
    const noReplicas = await store.catalogue.list({ replicas: false, start: 0, count: 100 });
    expect(ids(noReplicas)).toEqual(expected((r) => !r.isReplica));
    expect(noReplicas.total).toBe(9);
    expect((await store.catalogue.list({ replicas: true, start: 0, count: 0 })).total).toBe(12);
  });

  it('filters by readableBy: rightsHolder, any permission, public; not an empty permission list', async () => {
    const store = await loaded();
    const readable = (subjects: string[]): Promise<string[]> => store.catalogue.list({ readableBy: subjects, start: 0, count: 100 }).then(ids);
    const grants = (r: ObjectRecord, s: string): boolean =>
      r.sysmeta.rightsHolder === s || (r.sysmeta.accessPolicy?.allow ?? []).some((rule) => rule.permission.length > 0 && rule.subject.includes(s));
    expect(await readable(['public'])).toEqual(expected((r) => grants(r, 'public')));
    expect(await readable(['CN=grp'])).toEqual(expected((r) => grants(r, 'CN=grp')));
    expect(await readable(['CN=owner-1'])).toEqual(expected((r) => grants(r, 'CN=owner-1')));
    expect(await readable(['public', 'CN=owner-1', 'CN=grp'])).toEqual(expected((r) => ['public', 'CN=owner-1', 'CN=grp'].some((s) => grants(r, s))));
    expect(await readable(['CN=nobody'])).toEqual([]);
    expect(await readable([])).toEqual([]);
    expect(await readable(["' OR 1=1 --"])).toEqual([]);
  });

  it('combines filters, with the total matching the combination', async () => {
    const store = await loaded();
    const q = { formatId: 'eml', replicas: false, readableBy: ['public', 'CN=owner-0'], fromDate: new Date(T0 + 1000) } as const;
    const want = expected(
      (r) =>
        r.sysmeta.formatId === 'eml' &&
        !r.isReplica &&
        r.sysmeta.dateSysMetadataModified >= q.fromDate &&
        (r.sysmeta.rightsHolder === 'CN=owner-0' || (r.sysmeta.accessPolicy?.allow ?? []).some((a) => a.subject.includes('public'))),
    );
    const page = await store.catalogue.list({ ...q, start: 0, count: 100 });
    expect(ids(page)).toEqual(want);
    expect(page.total).toBe(want.length);
    const sliced = await store.catalogue.list({ ...q, start: 1, count: 1 });
    expect(ids(sliced)).toEqual(want.slice(1, 2));
    expect(sliced.total).toBe(want.length);
  });

  it('gives the same readableBy answer for shallow and deep offsets (both query forms)', async () => {
    const store = await openStore();
    const n = 10_050;
    const records = Array.from({ length: n }, (_, i) =>
      record(`obj-${String(i).padStart(6, '0')}`, {
        dateSysMetadataModified: new Date(T0 + (n - i)),
        accessPolicy: i % 3 === 0 ? { allow: [{ subject: ['public'], permission: ['read'] }] } : undefined,
      }),
    );
    await store.catalogue.apply({ insert: [...records].reverse() }); // in listing order (see loaded)
    const want = records
      .filter((_, i) => i % 3 === 0)
      .reverse()
      .map((r) => r.sysmeta.identifier);
    const shallow = await store.catalogue.list({ readableBy: ['public'], start: 3300, count: 50 });
    expect(shallow.total).toBe(want.length);
    expect(ids(shallow)).toEqual(want.slice(3300, 3350));
    const all = await store.catalogue.list({ start: 10_010, count: 100 });
    expect(ids(all)).toEqual(records.map((r) => r.sysmeta.identifier).reverse().slice(10_010));
    const deepOwner = await store.catalogue.list({ readableBy: ['CN=owner,DC=example'], start: 10_040, count: 100 });
    expect(deepOwner.total).toBe(n);
    expect(ids(deepOwner)).toEqual(records.map((r) => r.sysmeta.identifier).reverse().slice(10_040));
  });

  it('pages deep offsets on 200,000 objects quickly (index-only OFFSET walk)', async () => {
    const store = await openStore();
    const db = store.database;
    db.exec(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 199999)
      INSERT INTO mk_objects (pid, format_id, size, checksum_algorithm, checksum_value, date_modified, date_uploaded,
        serial_version, is_replica, storage_key, sysmeta)
      SELECT printf('pid-%07d', i), CASE WHEN i % 3 = 0 THEN 'eml' ELSE 'csv' END, i, 'MD5', 'x', ${T0} + i / 2, ${T0}, 1, i % 7 = 0,
        'k', json_object('identifier', printf('pid-%07d', i), 'dateUploaded', '2024-01-01T00:00:00.000Z',
        'dateSysMetadataModified', strftime('%Y-%m-%dT%H:%M:%fZ', (${T0} + i / 2) / 1000.0, 'unixepoch'), 'replica', json_array())
      FROM s`);
    await store.reindex(); // rows written behind the store's back
    const time = async (q: Parameters<typeof store.catalogue.list>[0]): Promise<number> => {
      const t = performance.now();
      await store.catalogue.list(q);
      return performance.now() - t;
    };
    await time({ start: 0, count: 1 }); // warm up
    const deep = await store.catalogue.list({ start: 199_900, count: 100 });
    expect(deep.total).toBe(200_000);
    expect(deep.items[0]?.sysmeta.identifier).toBe('pid-0199900');
    expect(deep.items.at(-1)?.sysmeta.identifier).toBe('pid-0199999');
    const deepFormat = await store.catalogue.list({ formatId: 'eml', replicas: false, start: 57_000, count: 10 });
    expect(deepFormat.items).toHaveLength(10);
    // generous bounds: a table scan with row reads would be an order of magnitude slower
    expect(await time({ start: 199_900, count: 100 })).toBeLessThan(400);
    expect(await time({ formatId: 'eml', replicas: false, start: 57_000, count: 10 })).toBeLessThan(400);
    expect(await time({ fromDate: new Date(T0 + 50_000), start: 99_000, count: 10 })).toBeLessThan(400);
    expect(await time({ start: 0, count: 0 })).toBeLessThan(200);
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT o.pid FROM mk_objects o ORDER BY o.date_modified, o.pid LIMIT 10 OFFSET 100`)
      .all()
      .map((row) => (row as { detail: string }).detail)
      .join(' | ');
    expect(plan).toMatch(/COVERING INDEX mk_objects_list/);
  });
});

describe('SqliteCatalogue across connections (second process view)', () => {
  it("sees another store's writes on the same file", async () => {
    const a = await openStore();
    const b = await openStore();
    await a.catalogue.apply({ insert: [record('from-a', { seriesId: 'S' })] });
    expect((await b.catalogue.get('from-a'))?.sysmeta.identifier).toBe('from-a');
    expect(await b.catalogue.identifierUse('S')).toBe('sid');
    await b.catalogue.apply({ replace: [{ pid: 'from-a', expectedSerialVersion: 1, sysmeta: sysmeta('from-a', { serialVersion: 2, seriesId: 'S' }) }] });
    expect((await a.catalogue.get('from-a'))?.sysmeta.serialVersion).toBe(2);
    expect((await a.catalogue.list({ start: 0, count: 0 })).total).toBe(1);
    // the identifier rules hold across connections
    await expectKind(b.catalogue.apply({ insert: [record('S')] }), 'already-exists');
    await expectKind(a.catalogue.apply({ insert: [record('x', { seriesId: 'from-a' })] }), 'already-exists');
  });

  it("reports a write lock held past busy_timeout as 'unavailable'", async () => {
    const a = await openStore();
    const b = await openStore({ busyTimeoutMs: 50 });
    a.database.exec('BEGIN IMMEDIATE');
    try {
      await expectKind(b.catalogue.apply({ insert: [record('blocked')] }), 'unavailable');
      // readers are not blocked by a writer in WAL mode
      expect((await b.catalogue.list({ start: 0, count: 0 })).total).toBe(0);
    } finally {
      a.database.exec('ROLLBACK');
    }
    await b.catalogue.apply({ insert: [record('blocked')] });
    expect(await a.catalogue.identifierUse('blocked')).toBe('pid');
  });
});

describe('error mapping', () => {
  it("reports an unreadable stored record as 'internal' with the cause", async () => {
    const store = await openStore();
    await store.catalogue.apply({ insert: [record('p')] });
    store.database.prepare("UPDATE mk_objects SET sysmeta = '{not json' WHERE pid = 'p'").run();
    const error = await store.catalogue.get('p').catch((e: unknown) => e);
    expect(AdapterError.is(error, 'internal')).toBe(true);
    expect((error as AdapterError).cause).toBeInstanceOf(SyntaxError);
  });

  it('maps SQLite result codes to adapter error kinds', () => {
    const sqliteError = (code: string): Error => Object.assign(new Error(code), { code });
    expect(toAdapterError(sqliteError('SQLITE_BUSY'), 'x').kind).toBe('unavailable');
    expect(toAdapterError(sqliteError('SQLITE_BUSY_SNAPSHOT'), 'x').kind).toBe('unavailable');
    expect(toAdapterError(sqliteError('SQLITE_LOCKED'), 'x').kind).toBe('unavailable');
    expect(toAdapterError(sqliteError('SQLITE_CORRUPT'), 'x').kind).toBe('internal');
    expect(toAdapterError(new TypeError('boom'), 'x').kind).toBe('internal');
    const cause = sqliteError('SQLITE_IOERR');
    expect(toAdapterError(cause, 'x').cause).toBe(cause);
    const passthrough = new AdapterError('conflict', 'c');
    expect(toAdapterError(passthrough, 'x')).toBe(passthrough);
  });
});

describe('SqliteStore position index', () => {
  it('stays exact through splits, moved and removed rows, and two connections writing at once', async () => {
    const [a, b] = [await openStore({ positionBucketRows: 3 }), await openStore({ positionBucketRows: 3 })];
    await exercisePositionIndex({
      writers: [a, b],
      reindex: async () => a.reindex(),
      truth: async () => {
        const db = a.database;
        const rows = db.prepare('SELECT pid, date_modified AS d, is_public AS p FROM mk_objects ORDER BY date_modified, pid').all() as Array<{ pid: string; d: number; p: number }>;
        const mine = db.prepare("SELECT pid FROM mk_access WHERE subject = 'CN=mine'").all() as Array<{ pid: string }>;
        const log = db.prepare('SELECT entry_id AS id FROM mk_events ORDER BY date_logged, entry_id').all() as Array<{ id: number }>;
        const buckets = db.prepare("SELECT count(*) AS n FROM mk_ranks WHERE list = 'objects'").get() as { n: number };
        return {
          objects: rows.map((r) => ({ pid: r.pid, date: r.d, pub: r.p === 1 })),
          mine: new Set(mine.map((r) => r.pid)),
          log: log.map((r) => String(r.id)),
          buckets: buckets.n,
        };
      },
    });
  });
});
