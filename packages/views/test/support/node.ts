import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemStorage, openSqliteStore } from '@memberkit/adapter-filesystem';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig, type NodeExtension } from '@memberkit/core';
import type { SystemMetadata } from '@memberkit/types';
import { createPackagesExtension, createViewsExtension } from '../../src/index.js';

export interface ViewsNode {
  baseUrl: string;
  tokens: { writer: string; other: string };
  subjects: { writer: string; other: string };
  stop(): Promise<void>;
}

/** A real node (SQLite catalogue, filesystem storage) with the MNView and MNPackage extensions. */
export async function startViewsNode(extensions: NodeExtension[] = [createViewsExtension(), createPackagesExtension()]): Promise<ViewsNode> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-views-'));
  const basePath = '/mn';
  const subjects = { writer: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org', other: 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org' };
  const keys = generateTokenKeyPair();
  const tokens = { writer: await mintToken(keys.privateKeyPem, { subject: subjects.writer, ttlSeconds: 24 * 3600 }), other: await mintToken(keys.privateKeyPem, { subject: subjects.other, ttlSeconds: 24 * 3600 }) };
  const store = openSqliteStore({ file: join(dir, 'catalogue.sqlite') });
  const storage = createFilesystemStorage({ root: join(dir, 'objects') });
  const config: CoreConfig = {
    node: {
      identifier: 'urn:node:VIEWSTEST',
      name: 'memberkit views test node',
      description: 'A Member Node started by the MNView/MNPackage tests',
      baseURL: `http://127.0.0.1${basePath}`,
      subject: 'CN=urn:node:VIEWSTEST,DC=dataone,DC=org',
      contactSubject: [subjects.writer],
      replicate: false,
      synchronize: true,
      schedule: DEFAULT_SCHEDULE,
    },
    access: { administrators: [], cnSubjects: [], createPolicy: 'authenticated' },
    auth: { jwt: { keys: [keys.publicKeyPem] } },
    basePath,
  };
  const node = await createMemberNode(config, { storage, metadata: store.catalogue, eventLog: store.eventLog }, { logger: silentLogger, extensions });
  const server = await serveNode(node, { port: 0, hostname: '127.0.0.1' });
  return {
    baseUrl: `http://127.0.0.1:${server.port}${basePath}`,
    tokens,
    subjects,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function sysmeta(pid: string, bytes: Uint8Array | { size: number; md5: string }, extra: Partial<SystemMetadata> = {}): SystemMetadata {
  const size = bytes instanceof Uint8Array ? bytes.byteLength : bytes.size;
  const md5 = bytes instanceof Uint8Array ? createHash('md5').update(bytes).digest('hex') : bytes.md5;
  const sm: SystemMetadata = {
    identifier: pid,
    formatId: 'application/octet-stream',
    size,
    checksum: { algorithm: 'MD5', value: md5 },
    rightsHolder: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    replica: [],
    ...extra,
  };
  // An explicit `accessPolicy: undefined` means: no access policy (only the rights holder reads).
  if ('accessPolicy' in extra && extra.accessPolicy === undefined) delete sm.accessPolicy;
  return sm;
}

/** A resource map aggregating `members`, the first documenting the others. */
export function resourceMap(mapPid: string, metadataPid: string, dataPids: string[]): string {
  const uri = (p: string): string => `https://cn.dataone.org/cn/v2/resolve/${encodeURIComponent(p)}`;
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/">
  <rdf:Description rdf:about="${esc(uri(mapPid))}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/>
    <dcterms:identifier>${esc(mapPid)}</dcterms:identifier>
    <ore:describes rdf:resource="${esc(uri(mapPid))}#aggregation"/>
  </rdf:Description>
  <rdf:Description rdf:about="${esc(uri(mapPid))}#aggregation">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${esc(uri(metadataPid))}"/>
${dataPids.map((d) => `    <ore:aggregates rdf:resource="${esc(uri(d))}"/>`).join('\n')}
  </rdf:Description>
  <rdf:Description rdf:about="${esc(uri(metadataPid))}">
    <dcterms:identifier>${esc(metadataPid)}</dcterms:identifier>
${dataPids.map((d) => `    <cito:documents rdf:resource="${esc(uri(d))}"/>`).join('\n')}
  </rdf:Description>
${dataPids.map((d) => `  <rdf:Description rdf:about="${esc(uri(d))}"><dcterms:identifier>${esc(d)}</dcterms:identifier><cito:isDocumentedBy rdf:resource="${esc(uri(metadataPid))}"/></rdf:Description>`).join('\n')}
</rdf:RDF>
`;
}
