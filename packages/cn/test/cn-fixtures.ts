// Objects and nodes for the CN's end-to-end tests: system metadata documents, the CN-private
// create and registerSystemMetadata over HTTP, and registered nodes written into the running
// CN's registry (as CNRegister and `memberkit cn approve-node` would leave them).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SqlStore } from '@memberkit/adapter-sql';
import { DEFAULT_SCHEDULE } from '@memberkit/core';
import { buildUploadSysmeta, encodeSysmeta, type SysmetaOptions } from '@memberkit/testkit';
import type { ApiVersion, Node, SystemMetadata } from '@memberkit/types';
import { NodeRegistry } from '../src/registry/node-registry.js';
import type { CnClient, CnProcess, Received } from './harness.js';

export const EML = 'eml://ecoinformatics.org/eml-2.1.1';

/** A small EML document (science metadata the CN holds). */
export function emlBytes(title: string): string {
  return `<?xml version="1.0"?><eml:eml xmlns:eml="eml://ecoinformatics.org/eml-2.1.1" packageId="p" system="s"><dataset><title>${title}</title><creator><individualName><surName>Tester</surName></individualName></creator><contact><individualName><surName>Tester</surName></individualName></contact></dataset></eml:eml>`;
}

const xmlPart = (xml: string) => new Blob([xml], { type: 'text/xml' });

/** CNCore.create (v2): bytes and system metadata; the caller must be a CN subject or administrator. */
export function createObject(client: CnClient, token: string, o: SysmetaOptions & { version?: ApiVersion }): Promise<Received> {
  const sm = buildUploadSysmeta(o);
  return client.form('POST', `/${o.version ?? 'v2'}/object`, { pid: o.pid, object: new Blob([o.bytes]), sysmeta: xmlPart(encodeSysmeta(sm, o.version ?? 'v2')) }, { token });
}

/** System metadata of an object held by a Member Node (as synchronization registers it). */
export function memberNodeSysmeta(pid: string, authoritativeMemberNode: string, over: Partial<SystemMetadata> = {}): SystemMetadata {
  return {
    ...buildUploadSysmeta({ pid, bytes: `data of ${pid}\n`, rightsHolder: 'CN=owner,DC=example', formatId: 'text/csv' }),
    serialVersion: 1,
    submitter: 'CN=owner,DC=example',
    dateUploaded: new Date('2024-01-01T00:00:00.000Z'),
    dateSysMetadataModified: new Date('2024-01-01T00:00:00.000Z'),
    originMemberNode: authoritativeMemberNode,
    authoritativeMemberNode,
    ...over,
  };
}

/** CNCore.registerSystemMetadata: the CN records an object it holds no bytes of. */
export function registerSysmeta(client: CnClient, token: string | null, sm: SystemMetadata, version: ApiVersion = 'v2'): Promise<Received> {
  return client.form('POST', `/${version}/meta`, { pid: sm.identifier, sysmeta: xmlPart(encodeSysmeta(sm, version)) }, { token });
}

/** Register and expect success. */
export async function registered(client: CnClient, token: string, sm: SystemMetadata): Promise<void> {
  const r = await registerSysmeta(client, token, sm);
  expect(r.status, r.text).toBe(200);
}

let serial = 0;
/** A Member Node's document (`versions`: of its MN services). */
export function memberNode(id: string, over: Partial<Node> & { versions?: string[] } = {}): Node {
  serial++;
  const { versions = ['v1', 'v2'], ...rest } = over;
  return {
    replicate: true, synchronize: true, type: 'mn', state: 'up', identifier: id, name: `node ${id}`, description: 'a test Member Node',
    baseURL: `https://mn${serial}.example.org/mn`,
    services: { service: ['MNCore', 'MNRead', 'MNAuthorization', 'MNStorage'].flatMap((name) => versions.map((version) => ({ name, version, available: true, restriction: [] }))) },
    synchronization: { schedule: DEFAULT_SCHEDULE },
    subject: [`CN=${id},DC=dataone,DC=org`], contactSubject: ['CN=contact,DC=example'], property: [],
    ...rest,
  };
}

/** The running CN's database, opened beside it (the way the registry's own tests reach it). */
export function openCnStore(cn: CnProcess): SqlStore {
  const config = JSON.parse(readFileSync(join(cn.dir, 'memberkit.config.json'), 'utf8')) as { catalogue: { type: string; file?: string; connection?: string } };
  return config.catalogue.type === 'sqlite'
    ? new SqlStore({ dialect: 'sqlite', connection: join(cn.dir, config.catalogue.file ?? 'memberkit-cn.db') })
    : new SqlStore({ dialect: 'postgres', connection: { connectionString: config.catalogue.connection! } });
}

/** Put nodes into the running CN's registry. */
export async function addNodes(cn: CnProcess, nodes: ReadonlyArray<{ node: Node; approved?: boolean }>): Promise<void> {
  const store = openCnStore(cn);
  await store.open();
  try {
    const registry = new NodeRegistry(store);
    for (const { node, approved = true } of nodes) {
      const conflict = await registry.insert({ node, registeredBy: 'CN=test harness', approved });
      expect(conflict, `registering ${node.identifier}`).toBeUndefined();
    }
  } finally {
    await store.close();
  }
}
