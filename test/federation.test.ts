// Tier 4 across processes: two memberkit nodes (separate processes started with
// `memberkit serve`) and a stub Coordinating Node. Replication from A to B, restricted
// content refused to an unauthorized node, a system metadata change propagated, a node
// restarted in the middle of a replication job finishing it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { startCoordinatingNodeStub, type CoordinatingNodeStub } from '@memberkit/testkit';
import { DataONEException, type SystemMetadata } from '@memberkit/types';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const CN_SUBJECT = 'CN=urn:node:CNSTUB,DC=dataone,DC=org';
const B_SUBJECT = 'CN=urn:node:B,DC=dataone,DC=org';
const TOKENS = {
  writer: await testToken('CN=writer'),
  cn: await testToken(CN_SUBJECT),
  nodeB: await testToken(B_SUBJECT),
  other: await testToken('CN=other'),
};

function sysmeta(pid: string, bytes: Buffer, extra: Partial<SystemMetadata> = {}): SystemMetadata {
  return {
    identifier: pid,
    formatId: 'application/octet-stream',
    size: bytes.length,
    checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
    rightsHolder: 'CN=writer',
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    replica: [],
    ...extra,
  };
}

async function bytesOf(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('federation: replication between two nodes through a Coordinating Node', () => {
  let work: string;
  let cn: CoordinatingNodeStub;
  let a: NodeProcess;
  let b: NodeProcess;
  let dirB: string;
  let writerA: MemberNodeClient;
  let cnToA: MemberNodeClient;
  let cnToB: () => MemberNodeClient;

  const startB = async () => {
    b = await startNodeProcess(dirB);
    cn.nodes.set('urn:node:B', { ...(await new MemberNodeClient({ baseUrl: b.baseUrl }).getCapabilities()), baseURL: b.baseUrl });
    return b;
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-federation-'));
    cn = await startCoordinatingNodeStub({ nodeId: 'urn:node:CNSTUB', subject: CN_SUBJECT });
    const dirA = join(work, 'a');
    dirB = join(work, 'b');
    writeConfig(dirA, {
      node: { identifier: 'urn:node:NodeA', subject: 'CN=urn:node:NodeA,DC=dataone,DC=org' },
      access: { administrators: [], cnSubjects: [CN_SUBJECT] },
      federation: { cnBaseUrl: cn.baseUrl, checkReservations: true },
    });
    writeFileSync(join(work, 'b-token'), TOKENS.nodeB);
    writeConfig(dirB, {
      node: { identifier: 'urn:node:B', subject: B_SUBJECT, replicate: true },
      access: { administrators: [], cnSubjects: [CN_SUBJECT] },
      federation: { cnBaseUrl: cn.baseUrl, credentials: { tokenFile: join(work, 'b-token') }, replication: { maxAttempts: 2, retryDelayMs: 200, leaseMs: 1500 } },
    });
    a = await startNodeProcess(dirA);
    // `memberkit register` puts A's node document in the CN's registry.
    // (async: the stub CN answers from this process)
    await promisify(execFile)(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), 'register', dirA, '--cn', cn.baseUrl], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    });
    const registered = cn.nodes.get('urn:node:NodeA');
    expect(registered?.type).toBe('mn');
    cn.nodes.set('urn:node:NodeA', { ...registered!, baseURL: a.baseUrl });
    await startB();
    writerA = new MemberNodeClient({ baseUrl: a.baseUrl, token: TOKENS.writer });
    cnToA = new MemberNodeClient({ baseUrl: a.baseUrl, token: TOKENS.cn });
    cnToB = () => new MemberNodeClient({ baseUrl: b.baseUrl, token: TOKENS.cn });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([writerA?.close(), cnToA?.close()]);
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await cn?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('replicates a public object from A to B and reports COMPLETED', async () => {
    const bytes = Buffer.from('public data to replicate\n'.repeat(1000));
    await writerA.create('fed/public', bytes, sysmeta('fed/public', bytes));
    const sm = await writerA.getSystemMetadata('fed/public');
    const client = cnToB();
    expect(await client.replicate(sm, 'urn:node:NodeA')).toBe(true);
    const report = await cn.waitForReplicationStatus('fed/public', 'completed');
    expect(report.nodeRef).toBe('urn:node:B');
    const got = await bytesOf((await new MemberNodeClient({ baseUrl: b.baseUrl }).get('fed/public')).stream);
    expect(got.equals(bytes)).toBe(true);
    // Replicas are listed, except with replicaStatus=false.
    const anonymousB = new MemberNodeClient({ baseUrl: b.baseUrl });
    expect((await anonymousB.listObjects({ identifier: 'fed/public' })).total).toBe(1);
    expect((await anonymousB.listObjects({ identifier: 'fed/public', replicaStatus: false })).total).toBe(0);
    // On A the transfer is a replication event, not a read.
    const events = (await cnToA.getLogRecords({ idFilter: 'fed/public' })).logEntry.map((e) => e.event);
    expect(events).toContain('replicate');
    expect(events).not.toContain('read');
    await client.close();
  });

  it('refuses replicate from callers that are not Coordinating Nodes', async () => {
    const writerB = new MemberNodeClient({ baseUrl: b.baseUrl });
    const bytes = Buffer.from('x');
    const err = await writerB.replicate(sysmeta('fed/nope', bytes), 'urn:node:NodeA').catch((e: unknown) => e);
    expect(DataONEException.is(err) && err.exceptionName).toBe('NotAuthorized');
    expect(DataONEException.is(err) && err.detailCode).toBe('2152');
  });

  it('refuses restricted content to a node the CN has not authorized, then serves it once authorized', async () => {
    const bytes = Buffer.from('restricted bytes');
    await writerA.create('fed/private', bytes, sysmeta('fed/private', bytes, { accessPolicy: undefined }));
    const sm = await writerA.getSystemMetadata('fed/private');
    // A direct getReplica by an unauthorized node subject is refused.
    const asB = new MemberNodeClient({ baseUrl: a.baseUrl, token: TOKENS.nodeB });
    const denied = await asB.getReplica('fed/private').catch((e: unknown) => e);
    expect(DataONEException.is(denied) && denied.exceptionName).toBe('NotAuthorized');
    // B's replication job hits the same refusal and reports FAILED with the reason.
    const client = cnToB();
    await client.replicate(sm, 'urn:node:NodeA');
    const failed = await cn.waitForReplicationStatus('fed/private', 'failed');
    expect(failed.failure?.description).toMatch(/NotAuthorized|may not replicate/);
    // Once the CN authorizes B, replication succeeds.
    cn.replicationAuthorizations.add(`fed/private\n${B_SUBJECT}`);
    await client.replicate(sm, 'urn:node:NodeA');
    await cn.waitForReplicationStatus('fed/private', 'completed');
    const cnReadsB = await bytesOf((await client.get('fed/private')).stream);
    expect(cnReadsB.equals(bytes)).toBe(true);
    await Promise.all([client.close(), asB.close()]);
  });

  it('applies the CN system metadata after systemMetadataChanged when its serialVersion is newer', async () => {
    const client = cnToB();
    const current = await client.getSystemMetadata('fed/public');
    cn.systemMetadata.set('fed/public', { ...current, serialVersion: (current.serialVersion ?? 1) + 5, rightsHolder: 'CN=new owner', replica: [] });
    expect(await client.systemMetadataChanged('fed/public', (current.serialVersion ?? 1) + 5, new Date())).toBe(true);
    const updated = await until(async () => {
      const sm = await client.getSystemMetadata('fed/public');
      return sm.rightsHolder === 'CN=new owner' ? sm : undefined;
    });
    expect(updated.serialVersion).toBe((current.serialVersion ?? 1) + 5);
    expect(updated.dateSysMetadataModified!.getTime()).toBeGreaterThan(current.dateSysMetadataModified!.getTime());
    await client.close();
  });

  it('a node restarted in the middle of a replication job finishes it', async () => {
    const big = Buffer.alloc(96 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
    await writerA.create('fed/big', { stream: (async function* () { for (let o = 0; o < big.length; o += 1 << 20) yield big.subarray(o, o + (1 << 20)); })(), size: big.length }, sysmeta('fed/big', big));
    const sm = await writerA.getSystemMetadata('fed/big');
    const client = cnToB();
    await client.replicate(sm, 'urn:node:NodeA');
    await client.close();
    await new Promise((r) => setTimeout(r, 250));
    await b.stop('SIGKILL');
    await startB();
    await cn.waitForReplicationStatus('fed/big', 'completed', 60_000);
    const after = cnToB();
    const got = await bytesOf((await after.get('fed/big')).stream);
    expect(createHash('sha1').update(got).digest('hex')).toBe(sm.checksum.value);
    await after.close();
  }, 120_000);

  it('refuses a create whose identifier another subject reserved on the CN', async () => {
    cn.reservations.set('fed/reserved', 'CN=someone else');
    const bytes = Buffer.from('y');
    const err = await writerA.create('fed/reserved', bytes, sysmeta('fed/reserved', bytes)).catch((e: unknown) => e);
    expect(DataONEException.is(err) && err.exceptionName).toBe('IdentifierNotUnique');
    cn.reservations.set('fed/mine', 'CN=writer');
    expect(await writerA.create('fed/mine', bytes, sysmeta('fed/mine', bytes))).toBe('fed/mine');
  });
});
