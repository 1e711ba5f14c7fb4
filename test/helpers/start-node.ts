import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemStorage, openSqliteStore } from '@memberkit/adapter-filesystem';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig } from '@memberkit/core';

export interface StartedNode {
  baseUrl: string;
  nodeId: string;
  tokens: { writer: string; admin: string; other: string };
  subjects: { writer: string; admin: string; other: string };
  stop(): Promise<void>;
}

/**
 * A real Member Node with the embedded default adapters (SQLite catalogue and event log,
 * managed filesystem storage) in a fresh temporary directory, served on 127.0.0.1 on a free port.
 */
export async function startNode(options: { basePath?: string } = {}): Promise<StartedNode> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-node-'));
  const basePath = options.basePath ?? '/mn';
  const nodeId = 'urn:node:MEMBERKITTEST';
  const subjects = {
    writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    admin: 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  };
  // Bearer JWTs signed with a key generated for this node, which it trusts.
  const keys = generateTokenKeyPair();
  const mint = (subject: string) => mintToken(keys.privateKeyPem, { subject, ttlSeconds: 24 * 3600 });
  const tokens = { writer: await mint(subjects.writer), admin: await mint(subjects.admin), other: await mint(subjects.other) };
  const store = openSqliteStore({ file: join(dir, 'catalogue.sqlite') });
  const storage = createFilesystemStorage({ root: join(dir, 'objects') });
  // baseURL is only published in the node document; the real port is known after listen.
  const config: CoreConfig = {
    node: {
      identifier: nodeId,
      name: 'memberkit test node',
      description: 'A Member Node started by the memberkit HTTP conformance tests',
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
    nodeId,
    tokens,
    subjects,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
