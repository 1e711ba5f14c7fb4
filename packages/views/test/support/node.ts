import 'reflect-metadata';
import { createHash } from 'node:crypto';
import type { NodeExtension } from '@memberkit/core';
import { startNode } from '../../../../test/helpers/start-node.js';
import type { SystemMetadata } from '@memberkit/types';
import { createPackagesExtension, createViewsExtension } from '../../src/index.js';

export interface ViewsNode {
  baseUrl: string;
  tokens: { writer: string; other: string };
  subjects: { writer: string; other: string };
  stop(): Promise<void>;
}

/** The repository's test node (test/helpers/start-node.ts) with the MNView and MNPackage extensions. */
export async function startViewsNode(extensions: NodeExtension[] = [createViewsExtension(), createPackagesExtension()], name = 'memberkit views test node'): Promise<ViewsNode> {
  const node = await startNode({ nodeId: 'urn:node:VIEWSTEST', name, extensions });
  return { baseUrl: node.baseUrl, tokens: node.tokens, subjects: node.subjects, stop: () => node.stop() };
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
