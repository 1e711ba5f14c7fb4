// The client's TLS client-certificate authentication against a node served over HTTPS:
// the certificate's subject is the session (it owns a private object), without it the
// caller is public; the node's certificate is verified against the configured CA.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, serveNode, silentLogger, type RunningServer } from '@memberkit/core';
import { DataONEException } from '@memberkit/types';
import { MemberNodeClient } from '../src/index.js';
import { createCa, dn, issue, type Issued } from '../../core/test/identity/pki.js';

const OWNER = 'CN=Client Cert Owner,O=Memberkit Test,C=US,DC=cilogon,DC=org';

describe('MemberNodeClient with a TLS client certificate', () => {
  let work: string;
  let running: RunningServer;
  let base: string;
  let serverCa: Issued;
  let owner: Issued;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'memberkit-client-tls-'));
    const clientCa = await createCa(dn(['CN', 'Client CA'], ['O', 'Memberkit Test']));
    serverCa = await createCa(dn(['CN', 'Server CA']));
    const server = await issue(serverCa, dn(['CN', 'localhost']), { serverIps: ['127.0.0.1'] });
    owner = await issue(clientCa, dn(['CN', 'Client Cert Owner'], ['O', 'Memberkit Test'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
    const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(work, 'catalogue.sqlite') });
    const node = await createMemberNode(
      {
        node: { identifier: 'urn:node:TLS', name: 'tls', description: 'tls', baseURL: 'https://127.0.0.1/mn', subject: 'CN=urn:node:TLS', contactSubject: [OWNER], replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE },
        access: { administrators: [], cnSubjects: [], createPolicy: 'authenticated' },
        auth: { clientCa: [clientCa.pem] },
        basePath: '/mn',
      },
      { storage: createFilesystemStorage({ root: join(work, 'objects') }), metadata: store.catalogue, eventLog: store.eventLog },
      { logger: silentLogger },
    );
    running = await serveNode(node, { port: 0, hostname: '127.0.0.1', tls: { cert: server.pem, key: server.keyPem, ca: [clientCa.pem] } });
    base = `https://127.0.0.1:${running.port}/mn`;
  }, 60_000);
  afterAll(async () => {
    await running?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('authenticates with the certificate; without it the caller is public', async () => {
    const asOwner = new MemberNodeClient({ baseUrl: base, certificate: { cert: owner.pem, key: owner.keyPem }, ca: serverCa.pem });
    const anonymous = new MemberNodeClient({ baseUrl: base, ca: serverCa.pem });
    const bytes = Buffer.from('private bytes over TLS');
    await asOwner.create('tls/private', bytes, {
      identifier: 'tls/private', formatId: 'application/octet-stream', size: bytes.length,
      checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
      rightsHolder: OWNER, replica: [],
    });
    expect((await asOwner.getSystemMetadata('tls/private')).submitter).toBe(OWNER);
    await expect(asOwner.isAuthorized('tls/private', 'changePermission')).resolves.toBe(true);
    const denied = await anonymous.getSystemMetadata('tls/private').catch((e: unknown) => e);
    expect(DataONEException.is(denied) && denied.exceptionName).toBe('NotAuthorized');
    await Promise.all([asOwner.close(), anonymous.close()]);
  });

  it('refuses a node whose certificate the configured CA did not sign', async () => {
    const strict = new MemberNodeClient({ baseUrl: base, retries: 0 });
    await expect(strict.ping()).rejects.toThrow();
    await strict.close();
  });
});
