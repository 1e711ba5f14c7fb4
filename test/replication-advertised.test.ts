// #16 item 5: "Replication is advertised." A Coordinating Node sends replicas only to nodes
// whose Node document lists MNReplication as available: derived from configuration (replicate
// on, a CN configured, writable storage). A replicate whose sourceNode the CN does not know is
// refused at once (InvalidRequest 2153), not accepted as a job that fails five times later.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { startCoordinatingNodeStub, validateXml, type CoordinatingNodeStub } from '@memberkit/testkit';
import { DataONEException, NodeCodec, type SystemMetadata } from '@memberkit/types';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';

const CN_SUBJECT = 'CN=urn:node:CNSTUB,DC=dataone,DC=org';

async function replicationServices(baseUrl: string): Promise<Array<{ version: string; available: boolean | undefined }>> {
  const out = [];
  for (const version of ['v1', 'v2']) {
    const xml = await (await fetch(`${baseUrl}/${version}/node`)).text();
    expect(await validateXml(xml)).toBeUndefined();
    const node = NodeCodec.decode(xml);
    out.push(...(node.services?.service ?? []).filter((s) => s.name === 'MNReplication').map((s) => ({ version: s.version, available: s.available })));
  }
  return out;
}

describe('MNReplication in the Node document, and replicate from an unknown source', () => {
  let work: string;
  let cn: CoordinatingNodeStub;
  let replicating: NodeProcess;
  let plain: NodeProcess;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-replication-'));
    cn = await startCoordinatingNodeStub({ nodeId: 'urn:node:CNSTUB', subject: CN_SUBJECT });
    writeConfig(join(work, 'b'), {
      node: { identifier: 'urn:node:B', replicate: true },
      access: { administrators: [], cnSubjects: [CN_SUBJECT] },
      federation: { cnBaseUrl: cn.baseUrl, replication: { maxAttempts: 2, retryDelayMs: 100 } },
    });
    // replicate on, but no Coordinating Node: nobody would send replicas.
    writeConfig(join(work, 'c'), { node: { identifier: 'urn:node:C', replicate: true } });
    [replicating, plain] = await Promise.all([startNodeProcess(join(work, 'b')), startNodeProcess(join(work, 'c'))]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([replicating?.stop(), plain?.stop()]);
    await cn?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('replicate on + a CN + writable storage: MNReplication available on v1 and v2', async () => {
    // Each version's document lists both versions' services.
    const services = await replicationServices(replicating.baseUrl);
    expect(services.map((s) => s.version).sort()).toEqual(['v1', 'v1', 'v2', 'v2']);
    expect(services.every((s) => s.available === true)).toBe(true);
  });

  it('without a Coordinating Node: MNReplication unavailable', async () => {
    const services = await replicationServices(plain.baseUrl);
    expect(services.length).toBeGreaterThan(0);
    expect(services.every((s) => s.available === false)).toBe(true);
  });

  it('a sourceNode missing from the CN node list -> InvalidRequest 2153 at once; no job, no report', async () => {
    const bytes = Buffer.from('replica bytes');
    const sm: SystemMetadata = {
      identifier: 'from-nowhere', formatId: 'application/octet-stream', size: bytes.length,
      checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
      rightsHolder: 'CN=writer', replica: [],
    };
    const client = new MemberNodeClient({ baseUrl: replicating.baseUrl, token: await testToken(CN_SUBJECT) });
    try {
      const err = await client.replicate(sm, 'urn:node:NOWHERE').catch((e: unknown) => e);
      expect(DataONEException.is(err) && [err.exceptionName, err.detailCode, err.errorCode]).toEqual(['InvalidRequest', '2153', 400]);
      expect(DataONEException.is(err) && err.description).toContain('urn:node:NOWHERE');
    } finally {
      await client.close();
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(cn.replicationReports.filter((r) => r.pid === 'from-nowhere')).toEqual([]);
  });
});
