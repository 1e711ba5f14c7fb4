// A data folder written by the embedded store before the one SQL store (fixtures/
// legacy-embedded-v0: old tables in memberkit.db) opens with today's `memberkit serve` and
// serves the same objects, log and series as the node that wrote it (expected.json); the old
// tables move into mk_* once and are kept as legacy_*.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../../test/support/node-process.js';
import { createSqlCatalogue } from '../src/index.js';
import { observeLegacyNode } from './helpers/legacy-observe.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'legacy-embedded-v0');

function copyFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-legacy-'));
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const tablesOf = (file: string): string[] => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
};

describe('a data folder of the embedded store before the one SQL store', () => {
  let dir: string;
  let node: NodeProcess | undefined;

  beforeAll(async () => {
    dir = copyFixture();
    expect(tablesOf(join(dir, 'memberkit.db'))).toEqual(expect.arrayContaining(['objects', 'identifiers', 'access', 'events', 'jobs']));
    writeConfig(dir, { node: { identifier: 'urn:node:LEGACY' } });
    node = await startNodeProcess(dir);
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the same log, listings, system metadata, bytes and series as the node that wrote it', async () => {
    const c = async (subject?: string) => new MemberNodeClient({ baseUrl: node!.baseUrl, ...(subject ? { token: await testToken(subject) } : {}) });
    const seen = await observeLegacyNode({ admin: await c('CN=admin'), writer: await c('CN=writer'), friend: await c('CN=friend'), anonymous: await c() });
    const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(seen)).toEqual(Object.keys(expected));
    for (const key of Object.keys(expected)) expect(seen[key], key).toEqual(expected[key]);
    // What the fixture holds, so that a wrong expected.json cannot pass unnoticed.
    expect(seen['series-1']).toBe('v3');
    expect((seen.listAnonymous as { total: number }).total).toBe(5);
    expect((seen.log as { total: number }).total).toBe(10);
    expect(seen['anonymous sysmeta private-1']).toMatchObject({ error: 'NotAuthorized' });
  });

  it('moved the old tables into mk_* once and kept them as legacy_*', () => {
    const tables = tablesOf(join(dir, 'memberkit.db'));
    expect(tables).toEqual(expect.arrayContaining(['legacy_objects', 'legacy_identifiers', 'legacy_access', 'legacy_events', 'legacy_jobs', 'legacy_ranks', 'mk_objects']));
    for (const old of ['objects', 'identifiers', 'access', 'events', 'jobs', 'ranks']) expect(tables).not.toContain(old);
  });
});

describe('the legacy import in the store', () => {
  it('copies objects, SIDs, access, events (entry ids kept) and the queued job; new writes continue after them; a second open does nothing', async () => {
    const dir = copyFixture();
    const file = join(dir, 'memberkit.db');
    try {
      const s = createSqlCatalogue({ dialect: 'sqlite', connection: file });
      await s.open();
      expect((await s.catalogue.get('v2'))?.sysmeta.obsoletedBy).toBe('v3');
      expect((await s.catalogue.get('archived-1'))?.sysmeta.archived).toBe(true);
      expect(await s.catalogue.identifierUse('series-1')).toBe('sid');
      expect((await s.catalogue.list({ start: 0, count: 10, readableBy: ['CN=friend'] })).items.map((r) => r.sysmeta.identifier)).toEqual(['shared/one%20two']);
      expect((await s.catalogue.list({ start: 0, count: 0 })).total).toBe(7);
      const jobs = await s.jobs.list({ state: 'queued' });
      expect(jobs.map((j) => [j.kind, j.payload])).toEqual([['refresh-sysmeta', { pid: 'v3', serialVersion: 2 }]]);
      // The dedupe key still holds: enqueueing the same refresh returns the imported job.
      expect(await s.jobs.enqueue('refresh-sysmeta', { pid: 'v3', serialVersion: 2 }, { dedupeKey: 'refresh:v3' })).toBe(jobs[0]!.id);
      // The identifier rules hold on imported rows (the PID and SID tables came along).
      await expect(s.catalogue.apply!({ insert: [{ ...(await s.catalogue.get('v1'))!, sysmeta: { ...(await s.catalogue.get('v1'))!.sysmeta, identifier: 'series-1', seriesId: undefined } }] })).rejects.toMatchObject({ kind: 'already-exists' });
      await s.eventLog.append([{ identifier: 'v3', ipAddress: '127.0.0.1', userAgent: 't', subject: 'public', event: 'read', dateLogged: new Date(), nodeIdentifier: 'urn:node:LEGACY' }]);
      const log = await s.eventLog.query({ start: 0, count: 100 });
      expect(log.total).toBe(11);
      expect(log.entries.map((e) => e.entryId)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
      await s.close();
      const again = createSqlCatalogue({ dialect: 'sqlite', connection: file });
      await again.open();
      expect((await again.catalogue.list({ start: 0, count: 0 })).total).toBe(7);
      expect((await again.eventLog.query({ start: 0, count: 0 })).total).toBe(11);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
