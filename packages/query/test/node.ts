import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { MemberNodeClient } from '@memberkit/client';
import { startNode } from '../../../test/helpers/start-node.js';
import type { CatalogueAdapter, SystemMetadata } from '@memberkit/types';
import { createQueryExtension, type QueryExtension, type QueryExtensionOptions } from '../src/index.js';

export interface QueryNode {
  baseUrl: string;
  ext: QueryExtension;
  catalogue: CatalogueAdapter;
  subjects: { writer: string; admin: string; other: string };
  tokens: { writer: string; admin: string; other: string };
  client(who?: 'writer' | 'admin' | 'other'): MemberNodeClient;
  stop(): Promise<void>;
}

/** The repository's test node (test/helpers/start-node.ts) with the query extension. */
export async function startQueryNode(options: QueryExtensionOptions = {}): Promise<QueryNode> {
  const ext = createQueryExtension({ followIntervalMs: 0, reconcileIntervalMs: 0, ...options });
  const node = await startNode({ nodeId: 'urn:node:QUERYTEST', name: 'query test node', extensions: [ext] });
  return {
    baseUrl: node.baseUrl,
    ext,
    catalogue: node.catalogue,
    subjects: node.subjects,
    tokens: node.tokens,
    client: (who) => new MemberNodeClient({ baseUrl: node.baseUrl, ...(who ? { token: node.tokens[who] } : {}), retries: 0 }),
    stop: () => node.stop(),
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
