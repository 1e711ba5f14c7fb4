import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWK } from 'jose';

/**
 * The key a Coordinating Node signs bearer JWTs with, and how it is published.
 *
 * The production CN signs its tokens with the private key of its server certificate, and a
 * verifier fetches that certificate from the CN (a TLS handshake). A memberkit CN may serve
 * plain HTTP (a local federation) and its key is not a certificate, so it publishes the public
 * key as a JSON Web Key Set at `{base}/v2/tokens/keys` (also `{base}/v1/tokens/keys`), each
 * key with its RFC 7638 thumbprint as `kid`, and names the `kid` in every token it signs: a
 * verifier that meets a new `kid` reads the set again (a memberkit MN does, `auth.jwt.jwksUrl`).
 */
export interface CnTokenKey {
  privateKey: KeyObject;
  /** ES256 for a P-256 key, RS256 for RSA, EdDSA for Ed25519. */
  alg: 'ES256' | 'RS256' | 'EdDSA';
  /** The public key's JWK thumbprint (SHA-256, base64url). */
  kid: string;
  /** The public key as published: kty and key fields, kid, alg, use "sig". */
  publicJwk: JWK;
}

function algorithmOf(key: KeyObject): CnTokenKey['alg'] {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve !== 'prime256v1' && curve !== 'P-256') throw new Error(`an EC token key must be on P-256 (ES256), not ${String(curve)}`);
      return 'ES256';
    }
    case 'rsa':
      return 'RS256';
    case 'ed25519':
      return 'EdDSA';
    default:
      throw new Error(`a token signing key must be EC P-256, RSA or Ed25519 (this one is ${String(key.asymmetricKeyType)})`);
  }
}

/** The signing key from its private key PEM; throws with a sentence when the PEM is not a usable private key. */
export async function loadTokenKey(privateKeyPem: string): Promise<CnTokenKey> {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(privateKeyPem);
  } catch (err) {
    throw new Error(`not a private key in PEM form (${(err as Error).message})`);
  }
  const alg = algorithmOf(privateKey);
  const jwk = await exportJWK(createPublicKey(privateKey));
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return { privateKey, alg, kid, publicJwk: { ...jwk, kid, alg, use: 'sig' } };
}

export interface SignTokenOptions {
  subject: string;
  /** Lifetime in seconds. */
  ttlSeconds: number;
  /** The `iss` claim; none when empty or absent. */
  issuer?: string;
  /** Issue time. Default now. */
  now?: Date;
  /** Further claims (e.g. fullName). */
  claims?: Record<string, unknown>;
}

/**
 * A bearer JWT shaped as the federation's tokens are (read by the official clients and
 * Member Nodes): `sub` and `userId` name the subject, `issuedAt` (ISO 8601) and `ttl`
 * (seconds) beside the standard `iat` and `exp`; the header names the key (`kid`).
 */
export async function signToken(key: CnTokenKey, options: SignTokenOptions): Promise<string> {
  const now = options.now ?? new Date();
  const iat = Math.floor(now.getTime() / 1000);
  const jwt = new SignJWT({ ...options.claims, userId: options.subject, issuedAt: now.toISOString(), ttl: options.ttlSeconds })
    .setProtectedHeader({ alg: key.alg, typ: 'JWT', kid: key.kid })
    .setSubject(options.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + options.ttlSeconds);
  if (options.issuer) jwt.setIssuer(options.issuer);
  return jwt.sign(key.privateKey);
}

/** The JSON Web Key Set document the CN publishes (RFC 7517 §5). */
export function keySetDocument(keys: readonly CnTokenKey[]): { keys: JWK[] } {
  return { keys: keys.map((k) => k.publicJwk) };
}
