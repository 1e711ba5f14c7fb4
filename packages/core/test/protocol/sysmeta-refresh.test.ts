// The CN's system metadata refresh (systemMetadataChanged) reads the operation table: it
// checks the catalogue's capabilities before `apply`, takes only the fields a refresh may
// change (on an overlay catalogue only the overlay's), and moves the revision by nextRevision.
import { describe, expect, it } from 'vitest';
import { AdapterError, OVERLAY_FIELDS, type CatalogueChange, type Job, type CatalogueAdapter, type CatalogueCapabilities, type ObjectRecord, type StoredSystemMetadata, type SystemMetadata } from '@memberkit/types';
import { MonotonicClock, silentLogger } from '@memberkit/core';
import { SystemMetadataRefresh } from '../../src/federation/sysmeta-refresh.js';
import { PermanentJobError } from '../../src/jobs/job-runner.js';
import type { CnGateway } from '../../src/federation/cn-gateway.js';

const local: StoredSystemMetadata = {
  identifier: 'p', formatId: 'text/csv', size: 10, checksum: { algorithm: 'MD5', value: 'aa' }, rightsHolder: 'CN=old',
  accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [], serialVersion: 2,
  dateUploaded: new Date(1000), dateSysMetadataModified: new Date(5000), submitter: 'CN=s', archived: false,
};

/** One record; `apply` follows the overlay rule when the catalogue is overlay-only. */
function catalogue(capabilities: CatalogueCapabilities, withApply = true) {
  const applied: CatalogueChange[] = [];
  let record: ObjectRecord = { sysmeta: { ...local }, storageKey: 'k', isReplica: false };
  const m: CatalogueAdapter = {
    capabilities,
    async get(pid) { return pid === 'p' ? record : undefined; },
    async seriesMembers() { return []; },
    async identifierUse() { return undefined; },
    async list() { return { total: 0, items: [] }; },
    ...(withApply ? {
      async apply(change: CatalogueChange) {
        for (const r of change.replace ?? []) {
          if (!capabilities.write) {
            for (const f of Object.keys({ ...record.sysmeta, ...r.sysmeta }) as Array<keyof StoredSystemMetadata>) {
              if ((OVERLAY_FIELDS as readonly string[]).includes(f) || f === 'serialVersion' || f === 'dateSysMetadataModified') continue;
              if (JSON.stringify(record.sysmeta[f] ?? null) !== JSON.stringify(r.sysmeta[f] ?? null)) throw new AdapterError('unsupported', `${f} is the archive's`);
            }
          }
          record = { ...record, sysmeta: r.sysmeta };
        }
        applied.push(change);
      },
    } : {}),
  };
  return { m, applied, current: () => record.sysmeta };
}

const theirs: SystemMetadata = { ...local, serialVersion: 7, rightsHolder: 'CN=new', formatId: 'text/plain', accessPolicy: undefined, dateSysMetadataModified: new Date(2000) };
const cn = { getSystemMetadata: async () => theirs } as unknown as CnGateway;
const job: Job = { id: '1', kind: 'refreshSystemMetadata', payload: { pid: 'p' }, attempts: 1, runAfter: new Date() };
const refresh = (m: CatalogueAdapter) => new SystemMetadataRefresh({ metadata: m, cn, clock: new MonotonicClock(), logger: silentLogger });

describe('SystemMetadataRefresh', () => {
  it('on a writable catalogue takes every field a refresh may change, with the CN serialVersion and a date moved forward', async () => {
    const c = catalogue({ write: true });
    await refresh(c.m).run(job);
    expect(c.current()).toMatchObject({ rightsHolder: 'CN=new', formatId: 'text/plain', serialVersion: 7, size: 10, submitter: 'CN=s' });
    expect(c.current().accessPolicy, 'absent in the CN copy: removed').toBeUndefined();
    expect(c.current().dateSysMetadataModified.getTime()).toBeGreaterThan(5000);
  });

  it('on an overlay catalogue takes only overlay fields (the archive keeps its formatId)', async () => {
    const c = catalogue({ write: false, overlay: true });
    await refresh(c.m).run(job);
    expect(c.current()).toMatchObject({ rightsHolder: 'CN=new', formatId: 'text/csv', serialVersion: 7 });
  });

  it('with a CatalogueWriter, the change goes through it with its notice', async () => {
    const c = catalogue({ write: true });
    const commits: unknown[] = [];
    const writer = { commit: async (x: { change: CatalogueChange }) => { commits.push(x); await c.m.apply!(x.change); return { dates: new Map(), notices: [] }; } };
    await new SystemMetadataRefresh({ metadata: c.m, cn, clock: new MonotonicClock(), logger: silentLogger, writer }).run(job);
    expect(commits).toHaveLength(1);
    expect(commits[0]).toMatchObject({ notices: [{ kind: 'updateSystemMetadata', pid: 'p', record: { sysmeta: { serialVersion: 7 } } }] });
    expect(c.current().rightsHolder).toBe('CN=new');
  });

  it('on a read-only catalogue never calls apply', async () => {
    const c = catalogue({ write: false }, true);
    await expect(refresh(c.m).run(job)).rejects.toBeInstanceOf(PermanentJobError);
    expect(c.applied).toEqual([]);
    const none = catalogue({ write: false, overlay: true }, false);
    await expect(refresh(none.m).run(job)).rejects.toBeInstanceOf(PermanentJobError);
  });
});
