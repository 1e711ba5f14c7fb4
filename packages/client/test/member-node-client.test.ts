// The typed client against a real node: every MN operation it exposes, typed exceptions
// from error bodies and from HEAD headers, streaming uploads, retries and timeouts.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataONEException, EVENTS_V1, type SystemMetadata } from '@memberkit/types';
import { MemberNodeClient } from '../src/index.js';
import { startNode, type StartedNode } from '../../../test/helpers/start-node.js';

function sysmeta(pid: string, bytes: Buffer, extra: Partial<SystemMetadata> = {}): SystemMetadata {
  return {
    identifier: pid,
    formatId: 'text/plain',
    size: bytes.length,
    checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
    rightsHolder: 'CN=Writer Person,O=Memberkit Test,C=US,DC=cilogon,DC=org',
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    replica: [],
    ...extra,
  };
}

async function text(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

async function rejection(p: Promise<unknown>): Promise<DataONEException> {
  try {
    await p;
  } catch (err) {
    if (DataONEException.is(err)) return err;
    throw err;
  }
  throw new Error('expected a DataONE exception');
}

describe('MemberNodeClient against a real node', () => {
  let node: StartedNode;
  let writer: MemberNodeClient;
  let admin: MemberNodeClient;
  let anonymous: MemberNodeClient;
  let v1: MemberNodeClient;

  beforeAll(async () => {
    node = await startNode();
    writer = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    admin = new MemberNodeClient({ baseUrl: node.baseUrl, token: () => node.tokens.admin });
    anonymous = new MemberNodeClient({ baseUrl: node.baseUrl });
    v1 = new MemberNodeClient({ baseUrl: node.baseUrl, version: 'v1' });
  });
  afterAll(async () => {
    await Promise.all([writer, admin, anonymous, v1].map((c) => c?.close()));
    await node?.stop();
  });

  it('reads the node document and pings', async () => {
    const doc = await anonymous.getCapabilities();
    expect(doc.identifier).toBe(node.nodeId);
    expect(doc.services?.service.some((s) => s.name === 'MNRead' && s.version === 'v2')).toBe(true);
    await expect(anonymous.ping()).resolves.toBe(true);
  });

  it('creates from bytes and from a stream, then reads back with every read operation', async () => {
    const bytes = Buffer.from('hello from the client\n');
    expect(await writer.create('client/one', bytes, sysmeta('client/one', bytes, { seriesId: 'client-series' }))).toBe('client/one');
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    const id = await writer.create('client two ü'.replace(' ', '_').replace(' ', '_'), { stream: Readable.from([big.subarray(0, 1000), big.subarray(1000)]), size: big.length }, sysmeta('client_two_ü', big));
    expect(id).toBe('client_two_ü');

    expect(await text((await anonymous.get('client/one')).stream)).toBe(bytes.toString());
    expect(await text((await anonymous.get('client-series')).stream)).toBe(bytes.toString());
    const partial = await anonymous.get('client/one', { range: { start: 6, end: 9 } });
    expect(await text(partial.stream)).toBe('from');
    const d = await anonymous.describe('client/one');
    expect(d).toMatchObject({ formatId: 'text/plain', size: bytes.length, serialVersion: 1, checksum: { algorithm: 'SHA-1' } });
    const sm = await anonymous.getSystemMetadata('client/one');
    expect(sm.seriesId).toBe('client-series');
    expect((await anonymous.getChecksum('client/one', 'MD5')).value).toBe(createHash('md5').update(bytes).digest('hex'));
    const list = await anonymous.listObjects({ count: 10 });
    expect(list.objectInfo.map((o) => o.identifier)).toEqual(expect.arrayContaining(['client/one', 'client_two_ü']));
    expect((await anonymous.listObjects({ count: 0 })).total).toBeGreaterThanOrEqual(2);
    expect(await text((await anonymous.getReplica('client/one')).stream)).toBe(bytes.toString());
    await expect(anonymous.isAuthorized('client/one', 'read')).resolves.toBe(true);
  });

  it('updates, archives, changes system metadata, generates identifiers and deletes', async () => {
    const v2bytes = Buffer.from('second version');
    expect(await writer.update('client/one', v2bytes, 'client/one.v2', sysmeta('client/one.v2', v2bytes, { obsoletes: 'client/one', seriesId: 'client-series' }))).toBe('client/one.v2');
    expect((await anonymous.getSystemMetadata('client/one')).obsoletedBy).toBe('client/one.v2');
    expect(await writer.archive('client/one.v2')).toBe('client/one.v2');
    const current = await writer.getSystemMetadata('client_two_ü');
    await expect(writer.updateSystemMetadata('client_two_ü', { ...current, accessPolicy: undefined })).resolves.toBe(true);
    expect((await rejection(anonymous.getSystemMetadata('client_two_ü'))).exceptionName).toBe('NotAuthorized');
    const generated = await writer.generateIdentifier('UUID');
    expect(generated).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(await admin.delete('client_two_ü')).toBe('client_two_ü');
    const log = await admin.getLogRecords({ idFilter: 'client', count: 100 });
    expect(log.logEntry.map((e) => e.event)).toEqual(expect.arrayContaining(['create', 'read', 'update', 'archive', 'delete']));
    // A public v1 caller sees the entries of public objects, and only v1 Event values.
    const publicV1 = await v1.getLogRecords({ count: 100 });
    expect(publicV1.total).toBeGreaterThan(0);
    expect(publicV1.logEntry.every((e) => EVENTS_V1.includes(e.event as never))).toBe(true);
    expect(publicV1.logEntry.some((e) => e.identifier === 'client_two_ü')).toBe(false);
  });

  it('throws typed exceptions from error bodies and from HEAD headers', async () => {
    const notFound = await rejection(anonymous.getSystemMetadata('no such object'));
    expect(notFound).toMatchObject({ exceptionName: 'NotFound', errorCode: 404, detailCode: '1060', pid: 'no such object' });
    const headNotFound = await rejection(anonymous.describe('no/such/object'));
    expect(headNotFound).toMatchObject({ exceptionName: 'NotFound', detailCode: '1380', pid: 'no/such/object' });
    const denied = await rejection(anonymous.isAuthorized('client/one', 'write'));
    expect(denied).toMatchObject({ exceptionName: 'NotAuthorized', errorCode: 401, detailCode: '1820' });
    const bytes = Buffer.from('x');
    const notUnique = await rejection(writer.create('client/one', bytes, sysmeta('client/one', bytes)));
    expect(notUnique).toMatchObject({ exceptionName: 'IdentifierNotUnique', errorCode: 409 });
    const sidOnV1 = await rejection(v1.getSystemMetadata('client-series'));
    expect(sidOnV1.exceptionName).toBe('NotFound');
    const badToken = new MemberNodeClient({ baseUrl: node.baseUrl, token: 'not-a-token' });
    expect((await rejection(badToken.listObjects())).exceptionName).toBe('InvalidToken');
    await badToken.close();
  });
});

describe('transport behaviour', () => {
  let server: Server;
  let hits = 0;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      if (req.url?.includes('/flaky') && hits % 3 !== 0) {
        res.writeHead(503, { 'Content-Type': 'text/xml' }).end('<error name="ServiceFailure" errorCode="500" detailCode="0"><description>busy</description></error>');
      } else if (req.url?.includes('/hang')) {
        // never answers
      } else if (req.url?.includes('/html')) {
        res.writeHead(500, { 'Content-Type': 'text/html' }).end('<html>oops</html>');
      } else {
        res.writeHead(200, { 'Content-Type': 'text/xml' }).end('<d1:checksum xmlns:d1="http://ns.dataone.org/service/types/v1" algorithm="MD5">abc</d1:checksum>');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mn`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('retries idempotent requests on 503, a bounded number of times', async () => {
    const client = new MemberNodeClient({ baseUrl: base, retries: 2 });
    hits = 0;
    expect((await client.getChecksum('flaky')).value).toBe('abc');
    expect(hits).toBe(3);
    await client.close();
  });

  it('times out a node that never answers', async () => {
    const client = new MemberNodeClient({ baseUrl: base, timeoutMs: 300, retries: 0 });
    const started = Date.now();
    await expect(client.getChecksum('hang')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
    await client.close();
  });

  it('turns a non-DataONE error page into a ServiceFailure carrying the status', async () => {
    const client = new MemberNodeClient({ baseUrl: base, retries: 0 });
    const err = await rejection(client.getChecksum('html'));
    expect(err).toMatchObject({ exceptionName: 'ServiceFailure', errorCode: 500 });
    await client.close();
  });
});
