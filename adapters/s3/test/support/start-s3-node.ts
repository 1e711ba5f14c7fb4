import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@memberkit/adapter-filesystem';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig } from '@memberkit/core';
import { createS3Storage, type S3StorageOptions } from '../../src/index.js';

export interface StartedS3Node {
  baseUrl: string;
  port: number;
  nodeId: string;
  tokens: { writer: string; admin: string; other: string };
  subjects: { writer: string; admin: string; other: string };
  stop(): Promise<void>;
}

/**
 * A real Member Node with the SQLite catalogue and event log (temporary file) and managed S3
 * storage (the given connection, a fresh prefix), served on 127.0.0.1 on a free port. The same
 * configuration as the repository's test/helpers/start-node.ts, with S3 bytes.
 */
export async function startS3Node(s3: Omit<S3StorageOptions, 'prefix'> & { prefix?: string }, options: { basePath?: string } = {}): Promise<StartedS3Node> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-s3node-'));
  const basePath = options.basePath ?? '/mn';
  const nodeId = 'urn:node:MEMBERKITTEST';
  const subjects = {
    writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    admin: 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  };
  const keys = generateTokenKeyPair();
  const mint = (subject: string) => mintToken(keys.privateKeyPem, { subject, ttlSeconds: 24 * 3600 });
  const tokens = { writer: await mint(subjects.writer), admin: await mint(subjects.admin), other: await mint(subjects.other) };
  const store = openSqliteStore({ file: join(dir, 'catalogue.sqlite') });
  const storage = createS3Storage({ prefix: `node-${randomBytes(6).toString('hex')}/`, ...s3 });
  const config: CoreConfig = {
    node: {
      identifier: nodeId,
      name: 'memberkit S3 test node',
      description: 'A Member Node with S3 storage started by the memberkit S3 adapter tests',
      baseURL: `http://127.0.0.1${basePath}`,
      subject: 'CN=urn:node:MEMBERKITTEST,DC=dataone,DC=org',
      contactSubject: [subjects.admin],
      replicate: false,
      synchronize: true,
      schedule: DEFAULT_SCHEDULE,
    },
    access: {
      administrators: [subjects.admin],
      cnSubjects: [],
      createPolicy: 'authenticated',
    },
    auth: { jwt: { keys: [keys.publicKeyPem] } },
    basePath,
  };
  const node = await createMemberNode(config, { storage, metadata: store.catalogue, eventLog: store.eventLog }, { logger: silentLogger });
  const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
  return {
    baseUrl: `http://127.0.0.1:${server.port}${basePath}`,
    port: server.port,
    nodeId,
    tokens,
    subjects,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
