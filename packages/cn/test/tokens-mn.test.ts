// Tokens the CN signs (issue #20 item 9): `memberkit cn token` signs with the CN folder's key,
// the CN publishes the verification key at {base}/v2/tokens/keys, and a memberkit Member Node
// configured with that key set (auth.jwt.jwksUrl) accepts the tokens: a CN and an MN started
// with the CLI, real HTTP, every XML body validated.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateTokenKeyPair, mintToken } from '@memberkit/core';
import { SystemMetadataCodec } from '@memberkit/types';
import { loadTokenKey, signToken } from '../src/tokens/token-key.js';
import { CN_ADMIN, CnClient, errorOf, runCli, startCn, type CnProcess } from './harness.js';
import { startNodeProcess, testToken, writeConfig, TEST_PUBLIC_KEY_FILE, type NodeProcess } from '../../../test/support/node-process.js';

const WRITER = 'CN=Token Writer,O=Example,C=US,DC=cilogon,DC=org';

describe('tokens signed by the CN, trusted by a Member Node', () => {
  let cn: CnProcess;
  let mn: NodeProcess;
  let mnDir: string;
  let cnClient: CnClient;
  let mnClient: CnClient;

  beforeAll(async () => {
    cn = await startCn();
    mnDir = mkdtempSync(join(tmpdir(), 'memberkit-mn-tokens-'));
    writeConfig(mnDir, {
      node: { identifier: 'urn:node:TOKENMN' },
      auth: { jwt: { keys: [TEST_PUBLIC_KEY_FILE], jwksUrl: `${cn.baseUrl}/v2/tokens/keys` } },
      federation: { cnBaseUrl: cn.baseUrl },
    });
    mn = await startNodeProcess(mnDir);
    cnClient = new CnClient(cn.baseUrl);
    mnClient = new CnClient(mn.baseUrl);
  });
  afterAll(async () => {
    await mn?.stop();
    await cn?.stop();
    if (mnDir) rmSync(mnDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await cnClient.validate();
    await mnClient.validate();
  });

  const cnToken = async (subject: string, extra: string[] = []) => (await runCli(['cn', 'token', '--subject', subject, ...extra, cn.dir])).stdout.trim();

  it.each(['v1', 'v2'])('the CN publishes its token key as a JSON Web Key Set (%s)', async (version) => {
    const res = await fetch(`${cn.baseUrl}/${version}/tokens/keys`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    const set = (await res.json()) as { keys: Array<Record<string, unknown>> };
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(set.keys[0]).not.toHaveProperty('d');
    expect(typeof set.keys[0]!['kid']).toBe('string');
  });

  it('`memberkit cn token` prints a federation-shaped JWT naming the key', async () => {
    const token = await cnToken(WRITER, ['--ttl', '2h']);
    const [header, payload] = token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    const set = (await (await fetch(`${cn.baseUrl}/v2/tokens/keys`)).json()) as { keys: Array<{ kid: string }> };
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: set.keys[0]!.kid });
    expect(payload).toMatchObject({ sub: WRITER, userId: WRITER, ttl: 7200 });
    expect(Number(payload!['exp']) - Number(payload!['iat'])).toBe(7200);
    expect(Date.parse(String(payload!['issuedAt']))).not.toBeNaN();
    // Default lifetime: cn.tokens.ttlSeconds (12 h).
    const plain = await cnToken(WRITER);
    expect(JSON.parse(Buffer.from(plain.split('.')[1]!, 'base64url').toString()).ttl).toBe(43_200);
  });

  it('the CN accepts the tokens it signs', async () => {
    const token = await cnToken(CN_ADMIN);
    // With the token, updateNodeCapabilities gets past the session to the document (refused as
    // incomplete); anonymous, it stops at NotAuthorized.
    const node = new Blob(['<d1:node xmlns:d1="http://ns.dataone.org/service/types/v2.0"/>']);
    const signed = await cnClient.form('PUT', '/v2/node/urn:node:NOSUCH', { node }, { token });
    expect(errorOf(signed)).toMatchObject({ name: 'InvalidRequest', detailCode: '4823' });
    const anonymous = await cnClient.form('PUT', '/v2/node/urn:node:NOSUCH', { node }, { token: null });
    expect(errorOf(anonymous).name).toBe('NotAuthorized');
  });

  it('the Member Node accepts a CN-signed token: an object created under that subject', async () => {
    const token = await cnToken(WRITER);
    const bytes = Buffer.from('site,temp\nA,12.5\n');
    const sysmeta = SystemMetadataCodec.encode({
      identifier: 'cn-token-object', formatId: 'text/csv', size: bytes.length,
      checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
      rightsHolder: WRITER, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [],
    }, 'v2');
    const created = await mnClient.form('POST', '/v2/object', { pid: 'cn-token-object', object: new Blob([bytes]), sysmeta: new Blob([sysmeta]) }, { token });
    expect(created.status, created.text).toBe(200);
    const meta = await mnClient.get('/v2/meta/cn-token-object');
    expect(meta.status).toBe(200);
    expect(SystemMetadataCodec.decode(meta.text).submitter).toBe(WRITER);
    // The node's own configured key keeps working beside the CN's key set.
    const own = await mnClient.get('/v2/meta/cn-token-object', { token: await testToken('CN=someone') });
    expect(own.status).toBe(200);
  });

  it('the Member Node refuses tokens from a key the CN does not publish, and expired CN tokens (InvalidToken)', async () => {
    const stranger = await mintToken(generateTokenKeyPair().privateKeyPem, { subject: WRITER });
    const refused = await mnClient.get('/v2/object?count=1', { token: stranger });
    expect(refused.status).toBe(401);
    expect(errorOf(refused).name).toBe('InvalidToken');
    expect(errorOf(refused).description).toMatch(/does not verify against any trusted key/);
    // Signed with the CN's key, expired an hour ago (beyond the minute of clock tolerance).
    const key = await loadTokenKey(readFileSync(join(cn.dir, 'cn-jwt-key.pem'), 'utf8'));
    const expired = await signToken(key, { subject: WRITER, ttlSeconds: 60, now: new Date(Date.now() - 3_600_000) });
    const late = await mnClient.get('/v2/object?count=1', { token: expired });
    expect(late.status).toBe(401);
    expect(errorOf(late).description).toMatch(/expired/);
  });

  it('`memberkit cn token` mistakes are one line naming what to fix', async () => {
    await expect(runCli(['cn', 'token', '--subject', WRITER, join(cn.dir, 'missing')])).rejects.toThrow(/no memberkit.config.json/);
    await expect(runCli(['cn', 'token', '--subject', WRITER, '--ttl', 'soon', cn.dir])).rejects.toThrow(/--ttl/);
    await expect(runCli(['cn', 'token', cn.dir])).rejects.toThrow(/--subject/);
  });
});
