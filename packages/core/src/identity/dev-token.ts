import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';

/** A key pair for locally minted tokens (development and tests): ES256 (P-256), PEM. */
export function generateTokenKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** The public key (SPKI PEM) of a private key (PEM). */
export function publicKeyOf(privateKeyPem: string): string {
  return createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'pem' }).toString();
}

export interface MintOptions {
  subject: string;
  /** Lifetime in seconds. Default 3600. */
  ttlSeconds?: number;
  issuer?: string;
  /** Issue time. Default now. */
  now?: Date;
  /** Extra claims. */
  claims?: Record<string, unknown>;
}

/**
 * A JWT shaped like the federation's (sub and userId, issuedAt and ttl, iat and exp), signed
 * with a local private key (PEM; EC P-256 → ES256, RSA → RS256).
 */
export async function mintToken(privateKeyPem: string, options: MintOptions): Promise<string> {
  const key = createPrivateKey(privateKeyPem);
  const alg = key.asymmetricKeyType === 'ec' ? 'ES256' : key.asymmetricKeyType === 'ed25519' ? 'EdDSA' : 'RS256';
  const now = options.now ?? new Date();
  const iat = Math.floor(now.getTime() / 1000);
  const ttl = options.ttlSeconds ?? 3600;
  const jwt = new SignJWT({ ...options.claims, userId: options.subject, issuedAt: now.toISOString(), ttl })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setSubject(options.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttl);
  if (options.issuer) jwt.setIssuer(options.issuer);
  return jwt.sign(key);
}

/** Parse a duration such as `3600`, `90s`, `30m`, `12h`, `7d` into seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`'${text}' is not a duration (e.g. 3600, 90s, 30m, 12h, 7d)`);
  const n = Number(m[1]);
  return n * ({ s: 1, m: 60, h: 3600, d: 86400 } as const)[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}
