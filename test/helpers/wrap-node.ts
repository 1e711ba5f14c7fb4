import 'reflect-metadata';
import { join } from 'node:path';
import { createSqlCatalogue, SqlScanState, type SqlCatalogueOptions } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, silentLogger, WrapScanner, type CoreConfig, type WrapStorage } from '@memberkit/core';
import { createQueryExtension } from '@memberkit/query';
import { AdapterError, type AccessPolicy } from '@memberkit/types';
import type { WrapNode } from '@memberkit/testkit';

const NODE_ID = 'urn:node:WRAPSUITE';
const PUBLIC: AccessPolicy = { allow: [{ subject: ['public'], permission: ['read'] }] };

function config(): CoreConfig {
  return {
    node: {
      identifier: NODE_ID, name: 'wrap suite', description: 'wrap suite node', baseURL: 'http://127.0.0.1/mn', subject: `CN=${NODE_ID},DC=dataone,DC=org`,
      contactSubject: ['CN=admin'], replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
    },
    access: { administrators: ['CN=admin'], cnSubjects: [], createPolicy: 'authenticated' },
    auth: { jwt: { keys: [] } },
    basePath: '/mn',
  };
}

let instances = 0;

/**
 * One node "process" over a wrapped storage: its own connection pool to the catalogue (the file
 * `dir/catalogue.sqlite`, or `database`; shared by every node of one root), its own query index, the core's
 * WrapScanner committing through the node's CatalogueWriter.
 */
export async function startWrapNode(dir: string, storage: WrapStorage, root: string, database?: Pick<SqlCatalogueOptions, 'dialect' | 'connection'>): Promise<WrapNode> {
  const sqlStore = createSqlCatalogue(database ?? { dialect: 'sqlite', connection: join(dir, 'catalogue.sqlite') });
  const state = new SqlScanState(sqlStore.store);
  const node = await createMemberNode(config(), { storage, metadata: sqlStore.catalogue, eventLog: sqlStore.eventLog }, {
    logger: silentLogger,
    extensions: [createQueryExtension({ index: { kind: 'sqlite', file: join(dir, `query-${++instances}.sqlite`) } })],
  });
  // Without the lease (to race on purpose): the same state, its lease always granted.
  const noLease = Object.assign(Object.create(state) as SqlScanState, { tryAcquire: async () => true, renew: async () => true, release: async () => undefined });
  const scanner = (lease: boolean) => new WrapScanner({
    storage, root, catalogue: sqlStore.catalogue, writer: node.writer, state: lease ? state : noLease, nodeId: NODE_ID, rightsHolder: 'CN=archive owner', accessPolicy: PUBLIC,
    batchSize: 16, flushIntervalMs: 10, concurrency: 8,
  });
  const leased = scanner(true);
  const racer = scanner(false);
  return {
    scan: (options) => (options?.lease === false ? racer : leased).scan(options?.pause ? { pause: options.pause } : {}),
    get: (pid) => sqlStore.catalogue.get(pid),
    async events(pid) {
      await (node.services.events as unknown as { flush?: () => Promise<void> }).flush?.();
      const page = await sqlStore.eventLog.query({ start: 0, count: 1000 });
      return page.entries.filter((e) => e.identifier === pid).sort((a, b) => Number(a.entryId) - Number(b.entryId)).map((e) => e.event);
    },
    async queryPids() {
      const res = await node.app.request('/mn/v2/query/solr/?q=*:*&fl=id&rows=10000&wt=json');
      if (res.status !== 200) throw new Error(`query answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as { response: { docs: Array<{ id: string }> } };
      return body.response.docs.map((d) => d.id);
    },
    async setAccess(pid, policy) {
      // An administrator's updateSystemMetadata: compare-and-set on serialVersion, retried.
      for (let attempt = 0; ; attempt++) {
        const current = (await sqlStore.catalogue.get(pid))!;
        const sysmeta = { ...current.sysmeta, accessPolicy: policy, serialVersion: current.sysmeta.serialVersion + 1, dateSysMetadataModified: new Date(Math.max(Date.now(), current.sysmeta.dateSysMetadataModified.getTime() + 1)) };
        try {
          await node.writer.commit({
            change: { replace: [{ pid, expectedSerialVersion: current.sysmeta.serialVersion, sysmeta }] },
            events: [], actor: { subject: 'CN=admin', ipAddress: '127.0.0.1', userAgent: 'wrap suite' },
            notices: [{ kind: 'updateSystemMetadata', pid, record: { ...current, sysmeta } }],
          });
          return;
        } catch (e) {
          if (!AdapterError.is(e, 'conflict') || attempt > 20) throw e;
        }
      }
    },
    close: () => node.close(),
  };
}
