// Mapping mode end to end for one dialect: a legacy archive (datasets, files, a view, versions)
// mapped by configuration and served by a real Member Node over HTTP, with tree storage over
// the files root and the event log in memberkit's own tables.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTreeStorage } from '@memberkit/adapter-filesystem';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig } from '@memberkit/core';
import { expectAdapterError, runCatalogueAdapterSuite } from '@memberkit/testkit';
import { ObjectListCodec, SystemMetadataCodec } from '@memberkit/types';
import { createMappedCatalogue, type MappedCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase, type FreshDatabase } from './databases.js';
import { createLegacyArchive, FILES, legacyMapping } from './legacy.js';

const TOKEN_KEYS = generateTokenKeyPair();
const ADMIN_TOKEN = await mintToken(TOKEN_KEYS.privateKeyPem, { subject: 'CN=admin', ttlSeconds: 24 * 3600 });

const enc = encodeURIComponent;

export function runMappingSuite(dialect: SqlDialectName): void {
  let db: FreshDatabase;
  let root: string;
  let mapped: MappedCatalogue;
  let base: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    db = await freshDatabase(dialect);
    root = await mkdtemp(join(tmpdir(), 'memberkit-legacy-files-'));
    await createLegacyArchive(db, root);
    const storage = createTreeStorage({ root });
    mapped = createMappedCatalogue({ dialect, connection: db.connection, mapping: legacyMapping(dialect), storage });
    const config: CoreConfig = {
      node: {
        identifier: 'urn:node:LEGACY', name: 'legacy archive', description: 'a legacy SQL catalogue mapped by memberkit',
        baseURL: 'http://127.0.0.1/mn', subject: 'CN=urn:node:LEGACY,DC=dataone,DC=org', contactSubject: ['CN=admin'],
        replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
      },
      access: { administrators: ['CN=admin'], cnSubjects: [], createPolicy: 'authenticated' },
      auth: { jwt: { keys: [TOKEN_KEYS.publicKeyPem] } },
      basePath: '/mn',
    };
    const node = await createMemberNode(config, { storage, metadata: mapped.catalogue, eventLog: mapped.eventLog }, { logger: silentLogger });
    const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
    base = `http://127.0.0.1:${server.port}/mn`;
    stop = async () => {
      await server.close();
      await node.close();
    };
  });
  afterAll(async () => {
    await stop?.();
    await db?.drop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const listing = async (query = '', token?: string) => {
    const res = await fetch(`${base}/v2/object?${query.includes('count=') ? '' : 'count=100'}${query}`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    expect(res.status).toBe(200);
    return ObjectListCodec.decode(await res.text());
  };
  const meta = async (pid: string) => {
    const res = await fetch(`${base}/v2/meta/${enc(pid)}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status, await res.clone().text()).toBe(200);
    return SystemMetadataCodec.decode(await res.text());
  };
  const ids = (list: Awaited<ReturnType<typeof listing>>) => (list.objectInfo ?? []).map((o) => o.identifier);

  describe(`mapping mode on ${dialect}: a legacy catalogue served over HTTP`, () => {
    it('lists the public objects in modified order, and everything for an administrator', async () => {
      const publicList = await listing();
      expect(publicList.total).toBe(FILES.length - 1); // ds-200 is private
      expect(ids(publicList)).toEqual(['ds-100.v1/obs.csv', 'ds-300.v1/map.png', 'ds-100.v2/obs.csv', 'ds-100.v3/obs.csv', 'ds-100.v3/readme.txt']);
      const all = await listing('', ADMIN_TOKEN);
      expect(all.total).toBe(FILES.length);
      expect(ids(all)).toContain('ds-200.v1/secret.csv');
      const csv = await listing('&formatId=text%2Fcsv');
      expect(ids(csv)).toEqual(['ds-100.v1/obs.csv', 'ds-100.v2/obs.csv', 'ds-100.v3/obs.csv']);
      const paged = await listing('&start=1&count=2');
      expect(paged.total).toBe(5);
      expect(ids(paged)).toEqual(['ds-300.v1/map.png', 'ds-100.v2/obs.csv']);
    });

    it('serves the bytes from the files root', async () => {
      for (const f of FILES.filter((x) => x.datasetId !== 4)) {
        const ds = { 1: 'ds-100.v1', 2: 'ds-100.v2', 3: 'ds-100.v3', 5: 'ds-300.v1' }[f.datasetId as 1 | 2 | 3 | 5];
        const res = await fetch(`${base}/v2/object/${enc(`${ds}/${f.name}`)}`);
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).toString()).toBe(f.bytes);
      }
      expect((await fetch(`${base}/v2/object/${enc('ds-200.v1/secret.csv')}`)).status).toBe(401);
    });

    it('derives system metadata: format by media type, archive MD5, rightsHolder, access, versions', async () => {
      const v1 = await meta('ds-100.v1/obs.csv');
      expect(v1.formatId).toBe('text/csv');
      expect(v1.checksum).toEqual({ algorithm: 'MD5', value: createHash('md5').update(FILES[0]!.bytes).digest('hex') });
      expect(v1.size).toBe(Buffer.byteLength(FILES[0]!.bytes));
      expect(v1.rightsHolder).toBe('https://orcid.org/0000-0001-0000-0001');
      expect(v1.accessPolicy?.allow?.[0]).toMatchObject({ subject: ['public'], permission: ['read'] });
      expect(v1.obsoletes).toBeUndefined();
      expect(v1.obsoletedBy).toBe('ds-100.v2/obs.csv');
      expect(v1.fileName).toBe('obs.csv');
      const v2 = await meta('ds-100.v2/obs.csv');
      expect(v2.obsoletes).toBe('ds-100.v1/obs.csv');
      expect(v2.obsoletedBy).toBe('ds-100.v3/obs.csv');
      const v3 = await meta('ds-100.v3/obs.csv');
      expect(v3.obsoletes).toBe('ds-100.v2/obs.csv');
      expect(v3.obsoletedBy).toBeUndefined();
      const png = await meta('ds-300.v1/map.png');
      expect(png.formatId).toBe('image/png');
      const secret = await meta('ds-200.v1/secret.csv');
      expect(secret.accessPolicy?.allow ?? []).toEqual([]);
    });

    it('computes a missing checksum from the bytes once and caches it in the overlay', async () => {
      const f = FILES[1]!; // no md5 in the archive
      const first = await meta('ds-100.v2/obs.csv');
      expect(first.checksum).toEqual({ algorithm: 'SHA-256', value: createHash('sha256').update(f.bytes).digest('hex') });
      const { rows } = await sql<{ checksum_value: unknown }>`SELECT checksum_value FROM mk_overlay WHERE pid = ${'ds-100.v2/obs.csv'}`.execute(mapped.store.db);
      expect(rows.map((r) => String(r.checksum_value))).toEqual([first.checksum.value]);
      // the cached value is used even if the bytes change behind the archive's back (no rescan
      // until the modified column changes)
      const { writeFile } = await import('node:fs/promises');
      await writeFile(join(root, ...f.relpath.split('/')), 'tampered');
      expect((await meta('ds-100.v2/obs.csv')).checksum.value).toBe(first.checksum.value);
      await writeFile(join(root, ...f.relpath.split('/')), f.bytes);
    });

    it('a change of the legacy modified column moves the object in the listing and shows in fromDate polls', async () => {
      const before = await listing();
      const checkpoint = new Date(Date.UTC(2025, 0, 1));
      expect((await listing(`&fromDate=${checkpoint.toISOString()}`)).total).toBe(0);
      const later = dialect === 'postgres' ? '2025-06-01 00:00:00' : '2025-06-01 00:00:00';
      await db.exec(`UPDATE files SET updated_at = '${later}' WHERE id = 11`);
      const after = await listing();
      expect(after.total).toBe(before.total);
      expect(ids(after).at(-1)).toBe('ds-100.v1/obs.csv');
      const polled = await listing(`&fromDate=${checkpoint.toISOString()}`);
      expect(ids(polled)).toEqual(['ds-100.v1/obs.csv']);
      expect(polled.objectInfo?.[0]?.dateSysMetadataModified.toISOString()).toBe('2025-06-01T00:00:00.000Z');
    });

    it('records events in memberkit tables, filtered by the mapped access', async () => {
      const res = await fetch(`${base}/v2/log?count=100`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(200);
      const { entries } = await mapped.eventLog.query({ start: 0, count: 100 });
      expect(entries.some((e) => e.event === 'read' && e.identifier === 'ds-100.v1/obs.csv')).toBe(true);
      await mapped.eventLog.append([{ ...entries[0]!, identifier: 'ds-200.v1/secret.csv' }]);
      const readable = await mapped.eventLog.query({ start: 0, count: 100, readableBy: ['public'] });
      expect(readable.entries.some((e) => e.identifier === 'ds-200.v1/secret.csv')).toBe(false);
      const owner = await mapped.eventLog.query({ start: 0, count: 100, readableBy: ['https://orcid.org/0000-0002-0000-0002'] });
      expect(owner.entries.map((e) => e.identifier)).toContain('ds-200.v1/secret.csv');
    });

    it('overlay: replace may change access and archived (CAS on serialVersion); archive fields and inserts are unsupported', async () => {
      const c = mapped.catalogue;
      const current = (await c.get('ds-300.v1/map.png'))!;
      expect(current.sysmeta.serialVersion).toBe(1);
      const modified = new Date(Date.UTC(2026, 0, 1));
      const next = { ...current.sysmeta, serialVersion: 2, dateSysMetadataModified: modified, archived: true, accessPolicy: { allow: [{ subject: ['CN=friend'], permission: ['read' as const] }] } };
      await c.apply({ replace: [{ pid: 'ds-300.v1/map.png', expectedSerialVersion: 1, sysmeta: next }] });
      const got = (await c.get('ds-300.v1/map.png'))!;
      expect(got.sysmeta).toMatchObject({ serialVersion: 2, archived: true, dateSysMetadataModified: modified, accessPolicy: next.accessPolicy });
      await expectAdapterError(c.apply({ replace: [{ pid: 'ds-300.v1/map.png', expectedSerialVersion: 1, sysmeta: { ...next, serialVersion: 3 } }] }), 'conflict');
      await expectAdapterError(c.apply({ replace: [{ pid: 'ds-300.v1/map.png', expectedSerialVersion: 2, sysmeta: { ...next, serialVersion: 3, size: 1 } }] }), 'unsupported');
      await expectAdapterError(c.apply({ replace: [{ pid: 'absent', expectedSerialVersion: 1, sysmeta: { ...next, identifier: 'absent' } }] }), 'not-found');
      await expectAdapterError(c.apply({ insert: [current] }), 'unsupported');
      await expectAdapterError(c.apply({ remove: [{ pid: 'ds-300.v1/map.png' }] }), 'unsupported');
      // readableBy follows the overlay policy now: no longer public, readable by CN=friend
      expect((await c.list({ start: 0, count: 10, readableBy: ['public'] })).items.map((r) => r.sysmeta.identifier)).not.toContain('ds-300.v1/map.png');
      expect((await c.list({ start: 0, count: 10, readableBy: ['CN=friend'] })).items.map((r) => r.sysmeta.identifier)).toEqual(['ds-300.v1/map.png']);
      // the overlay change moved it to the end of the listing
      expect((await c.list({ start: 0, count: 10 })).items.at(-1)?.sysmeta.identifier).toBe('ds-300.v1/map.png');
      expect((await c.list({ start: 0, count: 10, fromDate: modified })).total).toBe(1);
      expect(await c.identifierUse('ds-300.v1/map.png')).toBe('pid');
      expect(await c.identifierUse('nope')).toBeUndefined();
    });

    it('capabilities.overlay: the core allows archive and updateSystemMetadata of overlay fields, and nothing else', async () => {
      const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      // archive (a replace of an overlay field) is served on the read-only archive
      const archived = await fetch(`${base}/v2/archive/${enc('ds-100.v3/readme.txt')}`, { method: 'PUT', headers: auth });
      expect(archived.status, await archived.clone().text()).toBe(200);
      const after = await meta('ds-100.v3/readme.txt');
      expect(after.archived).toBe(true);
      expect(after.serialVersion).toBe(2);
      // updateSystemMetadata of the access policy and rights holder
      const update = async (sm: typeof after) => {
        const form = new FormData();
        form.append('pid', sm.identifier);
        form.append('sysmeta', new Blob([SystemMetadataCodec.encode(sm, 'v2')]), 'sysmeta.xml');
        return fetch(`${base}/v2/meta`, { method: 'PUT', headers: auth, body: form });
      };
      const v1 = await meta('ds-100.v1/obs.csv');
      const changed = await update({ ...v1, rightsHolder: 'CN=new-owner', accessPolicy: { allow: [{ subject: ['CN=friend'], permission: ['read'] }] } });
      expect(changed.status, await changed.clone().text()).toBe(200);
      const v1After = await meta('ds-100.v1/obs.csv');
      expect(v1After.rightsHolder).toBe('CN=new-owner');
      expect(v1After.serialVersion).toBe(v1.serialVersion! + 1);
      expect(v1After.dateSysMetadataModified!.getTime()).toBeGreaterThan(v1.dateSysMetadataModified!.getTime());
      // a field the legacy catalogue owns cannot change through the node
      const refused = await update({ ...v1After, formatId: 'text/plain' });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('formatId');
      expect((await meta('ds-100.v1/obs.csv')).formatId).toBe('text/csv');
      // create and delete need capabilities.write
      const form = new FormData();
      form.append('pid', 'new-object');
      form.append('object', new Blob(['x']), 'object');
      form.append('sysmeta', new Blob(['<x/>']), 'sysmeta.xml');
      expect((await fetch(`${base}/v2/object`, { method: 'POST', headers: auth, body: form })).status).toBe(501);
      expect((await fetch(`${base}/v2/object/${enc('ds-100.v1/obs.csv')}`, { method: 'DELETE', headers: auth })).status).toBe(501);
    });
  });

  it(`mapping mode on ${dialect}: obsolescence from a predecessor column`, async () => {
    const byPredecessor = createMappedCatalogue({ dialect, connection: db.connection, mapping: legacyMapping(dialect, { predecessor: true }), storage: createTreeStorage({ root }) });
    await byPredecessor.open();
    try {
      const v2 = (await byPredecessor.catalogue.get('ds-100.v2/obs.csv'))!;
      expect(v2.sysmeta.obsoletes).toBe('ds-100.v1/obs.csv');
      expect(v2.sysmeta.obsoletedBy).toBe('ds-100.v3/obs.csv');
      expect((await byPredecessor.catalogue.get('ds-100.v3/readme.txt'))!.sysmeta.obsoletes).toBeUndefined();
    } finally {
      await byPredecessor.close();
    }
  });

  // The shared suite on a mapped catalogue over an empty legacy view: capabilities (write is
  // false, so insert is refused with 'unsupported') and absent lookups.
  runCatalogueAdapterSuite(`mapped ${dialect} catalogue (empty legacy view)`, {
    async create() {
      const empty = createMappedCatalogue({
        dialect, connection: db.connection,
        mapping: { ...legacyMapping(dialect), source: { query: 'SELECT * FROM catalogue_files WHERE 1 = 0' } },
        storage: createTreeStorage({ root }),
      });
      await empty.open();
      return empty.catalogue;
    },
    async destroy(c) {
      await c.close();
    },
  });
}
