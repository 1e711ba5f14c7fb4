// A real Member Node whose catalogue and event log are the native SQL store (PostgreSQL or
// MySQL in a fresh schema/database) with managed filesystem storage, for runNodeSuite.
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig } from '@memberkit/core';
import { runNodeSuite } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase } from './databases.js';

export function runNativeNodeSuite(dialect: SqlDialectName): void {
  let started: Promise<{ baseUrl: string; stop(): Promise<void> }> | undefined;
  const nodeId = 'urn:node:MEMBERKITSQL';
  const subjects = {
    writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    admin: 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  };
  const tokens = { writer: '', admin: '', other: '' };

  async function start() {
    const keys = generateTokenKeyPair();
    for (const who of ['writer', 'admin', 'other'] as const) tokens[who] = await mintToken(keys.privateKeyPem, { subject: subjects[who], ttlSeconds: 24 * 3600 });
    const db = await freshDatabase(dialect);
    const dir = await mkdtemp(join(tmpdir(), 'memberkit-sql-node-'));
    const sqlStore = createSqlCatalogue({ dialect, connection: db.connection });
    const storage = createFilesystemStorage({ root: join(dir, 'objects') });
    const config: CoreConfig = {
      node: {
        identifier: nodeId, name: 'memberkit SQL test node', description: `native ${dialect} catalogue`,
        baseURL: 'http://127.0.0.1/mn', subject: `CN=${nodeId},DC=dataone,DC=org`, contactSubject: [subjects.admin],
        replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
      },
      access: {
        administrators: [subjects.admin], cnSubjects: [], createPolicy: 'authenticated',
      },
      auth: { jwt: { keys: [keys.publicKeyPem] } },
      basePath: '/mn',
    };
    const node = await createMemberNode(config, { storage, metadata: sqlStore.catalogue, eventLog: sqlStore.eventLog }, { logger: silentLogger });
    const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
    return {
      baseUrl: `http://127.0.0.1:${server.port}/mn`,
      async stop() {
        await server.close();
        await node.close();
        await db.drop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }

  afterAll(async () => {
    if (started) await (await started).stop();
  });

  runNodeSuite(`native ${dialect} catalogue + event log, filesystem storage`, async () => {
    const n = await (started ??= start());
    return { baseUrl: n.baseUrl, tokens, writerSubject: subjects.writer, nodeId };
  });
}
