import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JwtError, JwtVerifier, generateTokenKeyPair, mintToken } from '@memberkit/core';
import { keySetDocument, loadTokenKey, signToken, type CnTokenKey } from '../src/tokens/token-key.js';

// The verifier side of CN-signed tokens (packages/core/src/identity/jwt.ts with jwksUrl):
// a published key set over real HTTP, read on first use, read again for an unknown kid.

const ecPem = () => generateTokenKeyPair().privateKeyPem;
const rsaPem = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('a published token key set (JWKS) trusted by a verifier', () => {
  let server: Server;
  let url: string;
  let published: CnTokenKey[] = [];
  let reads = 0;
  let answer: 'keys' | 'broken' = 'keys';

  beforeAll(async () => {
    server = createServer((req, res) => {
      reads++;
      if (answer === 'broken') {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('down');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/jwk-set+json' }).end(JSON.stringify(keySetDocument(published)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cn/v2/tokens/keys`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('accepts a token signed with a published key, reading the set once', async () => {
    const key = await loadTokenKey(ecPem());
    published = [key];
    reads = 0;
    const verifier = new JwtVerifier({ keys: [], jwksUrl: url, jwksCooldownMs: 0 });
    expect(verifier.configured).toBe(true);
    const a = await verifier.verify(await signToken(key, { subject: 'CN=a,DC=test', ttlSeconds: 600 }));
    const b = await verifier.verify(await signToken(key, { subject: 'CN=b,DC=test', ttlSeconds: 600 }));
    expect([a.subject, b.subject]).toEqual(['CN=a,DC=test', 'CN=b,DC=test']);
    expect(a.payload['userId']).toBe('CN=a,DC=test');
    expect(reads).toBe(1);
  });

  it('reads the set again when a token names a key it does not hold (a CN with a new key)', async () => {
    const first = await loadTokenKey(ecPem());
    published = [first];
    const verifier = new JwtVerifier({ keys: [], jwksUrl: url, jwksCooldownMs: 0 });
    await verifier.verify(await signToken(first, { subject: 'CN=a,DC=test', ttlSeconds: 600 }));
    const next = await loadTokenKey(rsaPem());
    const token = await signToken(next, { subject: 'CN=rotated,DC=test', ttlSeconds: 600 });
    // Not published yet: refused.
    await expect(verifier.verify(token)).rejects.toThrow(/does not verify against any trusted key/);
    published = [first, next];
    reads = 0;
    expect((await verifier.verify(token)).subject).toBe('CN=rotated,DC=test');
    expect(reads).toBe(1);
  });

  it('refuses tokens signed with an unpublished key, expired tokens and tokens for another issuer', async () => {
    const key = await loadTokenKey(ecPem());
    published = [key];
    const verifier = new JwtVerifier({ keys: [], jwksUrl: url, jwksCooldownMs: 0, issuer: 'https://cn.test' });
    const stranger = await loadTokenKey(ecPem());
    await expect(verifier.verify(await signToken(stranger, { subject: 'CN=x', ttlSeconds: 600, issuer: 'https://cn.test' }))).rejects.toThrow(JwtError);
    const expired = await signToken(key, { subject: 'CN=x', ttlSeconds: 60, issuer: 'https://cn.test', now: new Date(Date.now() - 3_600_000) });
    await expect(verifier.verify(expired)).rejects.toThrow(/expired/);
    await expect(verifier.verify(await signToken(key, { subject: 'CN=x', ttlSeconds: 600, issuer: 'https://other.test' }))).rejects.toThrow(/iss/);
    expect((await verifier.verify(await signToken(key, { subject: 'CN=x', ttlSeconds: 600, issuer: 'https://cn.test' }))).subject).toBe('CN=x');
  });

  it('says the key set cannot be read when its URL fails, and keeps the configured keys working without it', async () => {
    answer = 'broken';
    try {
      const local = generateTokenKeyPair();
      const verifier = new JwtVerifier({ keys: [local.publicKeyPem], jwksUrl: url, jwksCooldownMs: 0 });
      const other = await loadTokenKey(ecPem());
      await expect(verifier.verify(await signToken(other, { subject: 'CN=x', ttlSeconds: 600 }))).rejects.toThrow(new RegExp(`token keys published at ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      reads = 0;
      expect((await verifier.verify(await mintToken(local.privateKeyPem, { subject: 'CN=local' }))).subject).toBe('CN=local');
      expect(reads).toBe(0);
    } finally {
      answer = 'keys';
    }
  });

  it('publishes each key with kid, alg and use, and signs with that kid', async () => {
    const key = await loadTokenKey(rsaPem());
    const doc = keySetDocument([key]);
    expect(doc.keys[0]).toMatchObject({ kty: 'RSA', kid: key.kid, alg: 'RS256', use: 'sig' });
    expect(doc.keys[0]).not.toHaveProperty('d');
    const token = await signToken(key, { subject: 'CN=x', ttlSeconds: 10 });
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'RS256', kid: key.kid, typ: 'JWT' });
    await expect(loadTokenKey('not a key')).rejects.toThrow(/not a private key/);
  });
});
