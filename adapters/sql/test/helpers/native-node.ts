// A real Member Node whose catalogue and event log are the native SQL store (PostgreSQL or
// MySQL in a fresh schema/database) with managed filesystem storage, for runNodeSuite.
import 'reflect-metadata';
import { afterAll } from 'vitest';
import { startNode, type StartedNode } from '../../../../test/helpers/start-node.js';
import { runNodeSuite } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase } from './databases.js';

export function runNativeNodeSuite(dialect: SqlDialectName): void {
  let started: Promise<StartedNode & { drop(): Promise<void> }> | undefined;
  const nodeId = 'urn:node:MEMBERKITSQL';

  async function start() {
    const db = await freshDatabase(dialect);
    const sqlStore = createSqlCatalogue({ dialect, connection: db.connection });
    const node = await startNode({ nodeId, name: 'memberkit SQL test node', catalogue: () => ({ metadata: sqlStore.catalogue, eventLog: sqlStore.eventLog }) });
    return { ...node, drop: () => db.drop() };
  }

  afterAll(async () => {
    if (!started) return;
    const n = await started;
    await n.stop();
    await n.drop();
  });

  runNodeSuite(`native ${dialect} catalogue + event log, filesystem storage`, async () => {
    const n = await (started ??= start());
    return { baseUrl: n.baseUrl, tokens: n.tokens, writerSubject: n.subjects.writer, nodeId };
  });
}
