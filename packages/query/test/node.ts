import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemStorage, openSqliteStore } from '@memberkit/adapter-filesystem';
import { MemberNodeClient } from '@memberkit/client';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig } from '@memberkit/core';
import type { MetadataAdapter, SystemMetadata } from '@memberkit/types';
import { createQueryExtension, type QueryExtension, type QueryExtensionOptions } from '../src/index.js';

export interface QueryNode {
  baseUrl: string;
  ext: QueryExtension;
  catalogue: MetadataAdapter;
  subjects: { writer: string; admin: string; other: string };
  tokens: { writer: string; admin: string; other: string };
  client(who?: 'writer' | 'admin' | 'other'): MemberNodeClient;
  stop(): Promise<void>;
}

/** A real node (SQLite catalogue, filesystem storage) with the query extension, served on 127.0.0.1. */
export async function startQueryNode(options: QueryExtensionOptions = {}): Promise<QueryNode> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-query-'));
  const basePath = '/mn';
  const subjects = {
    writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    admin: 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
  };
  const keys = generateTokenKeyPair();
  const mint = (subject: string) => mintToken(keys.privateKeyPem, { subject, ttlSeconds: 24 * 3600 });
  const tokens = { writer: await mint(subjects.writer), admin: await mint(subjects.admin), other: await mint(subjects.other) };
  const store = openSqliteStore({ file: join(dir, 'catalogue.sqlite') });
  const storage = createFilesystemStorage({ root: join(dir, 'objects') });
  const config: CoreConfig = {
    node: {
      identifier: 'urn:node:QUERYTEST',
      name: 'query test node',
      description: 'A Member Node started by the MNQuery tests',
      baseURL: `http://127.0.0.1${basePath}`,
      subject: 'CN=urn:node:QUERYTEST,DC=dataone,DC=org',
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
  const ext = createQueryExtension({ followIntervalMs: 0, reconcileIntervalMs: 0, ...options });
  const node = await createMemberNode(config, { storage, metadata: store.catalogue, eventLog: store.eventLog }, { logger: silentLogger, extensions: [ext] });
  const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${server.port}${basePath}`;
  return {
    baseUrl,
    ext,
    catalogue: store.catalogue,
    subjects,
    tokens,
    client: (who) => new MemberNodeClient({ baseUrl, ...(who ? { token: tokens[who] } : {}), retries: 0 }),
    async stop() {
      await server.close();
      await node.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function sysmetaFor(pid: string, bytes: string | Uint8Array, formatId: string, rightsHolder: string, extra: Partial<SystemMetadata> = {}): SystemMetadata {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes);
  return {
    identifier: pid,
    formatId,
    size: buf.length,
    checksum: { algorithm: 'MD5', value: createHash('md5').update(buf).digest('hex') },
    rightsHolder,
    submitter: rightsHolder,
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    replica: [],
    ...extra,
  };
}

export interface SolrJson {
  responseHeader: { status: number; QTime: number; params: Record<string, string | string[]> };
  response: { numFound: number; start: number; docs: Array<Record<string, unknown>> };
  facet_counts?: { facet_fields: Record<string, Array<string | number>> };
}

/** GET /v2/query/solr/?{query}&wt=json as `who`. */
export async function solr(node: QueryNode, query: string, who?: 'writer' | 'admin' | 'other'): Promise<SolrJson> {
  const res = await fetch(`${node.baseUrl}/v2/query/solr/?${query}&wt=json`, { headers: who ? { Authorization: `Bearer ${node.tokens[who]}` } : {} });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`query ${query} answered ${res.status}: ${body}`);
  return JSON.parse(body) as SolrJson;
}

/** The ids a query finds (rows=1000, fl=id), sorted. */
export async function ids(node: QueryNode, query: string, who?: 'writer' | 'admin' | 'other'): Promise<string[]> {
  const r = await solr(node, `${query}&fl=id&rows=1000`, who);
  return r.response.docs.map((d) => String(d.id)).sort();
}
