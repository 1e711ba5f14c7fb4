import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig, type NodeExtension } from '@memberkit/core';
import type { EventLogStore, CatalogueAdapter, StorageAdapter } from '@memberkit/types';

export interface StartedNode {
  baseUrl: string;
  port: number;
  nodeId: string;
  tokens: { writer: string; admin: string; other: string };
  subjects: { writer: string; admin: string; other: string };
  /** The node's catalogue (for tests that look behind the API). */
  catalogue: CatalogueAdapter;
  stop(): Promise<void>;
}

export interface StartNodeOptions {
  basePath?: string;
  nodeId?: string;
  name?: string;
  /** The storage under test, given the node's temporary folder. Default: managed filesystem storage. */
  storage?: (dir: string) => StorageAdapter;
  /** The catalogue and event log under test. Default: the embedded SQLite store in the node's folder. */
  catalogue?: (dir: string) => { metadata: CatalogueAdapter; eventLog: EventLogStore };
  /** Optional APIs to plug in. */
  extensions?: NodeExtension[];
}

/** The three callers every node-level test uses: a writer, a node administrator, someone else. */
export const TEST_SUBJECTS = {
  writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  admin: 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
} as const;

/**
 * A real Member Node with the embedded default adapters (SQLite catalogue and event log,
 * managed filesystem storage unless `storage` says otherwise) in a fresh temporary directory,
 * served on 127.0.0.1 on a free port, trusting bearer JWTs minted for the test subjects.
 */
export async function startNode(options: StartNodeOptions = {}): Promise<StartedNode> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-node-'));
  const basePath = options.basePath ?? '/mn';
  const nodeId = options.nodeId ?? 'urn:node:MEMBERKITTEST';
  const subjects = { ...TEST_SUBJECTS };
  // Bearer JWTs signed with a key generated for this node, which it trusts.
  const keys = generateTokenKeyPair();
  const mint = (subject: string) => mintToken(keys.privateKeyPem, { subject, ttlSeconds: 24 * 3600 });
  const tokens = { writer: await mint(subjects.writer), admin: await mint(subjects.admin), other: await mint(subjects.other) };
  const catalogue = options.catalogue
    ? options.catalogue(dir)
    : ((store) => ({ metadata: store.catalogue, eventLog: store.eventLog }))(createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'catalogue.sqlite') }));
  const storage = options.storage ? options.storage(dir) : createFilesystemStorage({ root: join(dir, 'objects') });
  // baseURL is only published in the node document; the real port is known after listen.
  const config: CoreConfig = {
    node: {
      identifier: nodeId,
      name: options.name ?? 'memberkit test node',
      description: 'A Member Node started by the memberkit tests',
      baseURL: `http://127.0.0.1${basePath}`,
      subject: `CN=${nodeId},DC=dataone,DC=org`,
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
  const node = await createMemberNode(
    config,
    { storage, ...catalogue },
    { logger: silentLogger, ...(options.extensions ? { extensions: options.extensions } : {}) },
  );
  const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
  return {
    baseUrl: `http://127.0.0.1:${server.port}${basePath}`,
    port: server.port,
    nodeId,
    tokens,
    subjects,
    catalogue: catalogue.metadata,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
