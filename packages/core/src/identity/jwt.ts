import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload } from 'jose';

/** Asymmetric algorithms only: HS* (and `none`) can never verify against a public key. */
export const DEFAULT_JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export interface JwtOptions {
  /** Keys tokens are verified against: PEM certificates, SPKI PEM public keys or JWK JSON (text, not paths). */
  keys: readonly string[];
  /** Required `iss` when set. */
  issuer?: string;
  /** Allowed `alg` values. Default: DEFAULT_JWT_ALGORITHMS. */
  algorithms?: readonly string[];
  /** Leeway for exp/nbf/iat, in seconds. Default 60. */
  clockToleranceSeconds?: number;
}

/** How many verified tokens a verifier remembers (most recently verified first to stay). */
const VERIFIED_TOKENS = 1000;

export class JwtError extends Error {
  override readonly name = 'JwtError';
}

/** A public key from a PEM certificate, an SPKI PEM or a JWK (JSON text). */
export function importVerificationKey(text: string): KeyObject {
  const t = text.trim();
  if (t.startsWith('{')) return createPublicKey({ key: JSON.parse(t) as import('node:crypto').JsonWebKey, format: 'jwk' });
  if (t.includes('-----BEGIN CERTIFICATE-----')) return new X509Certificate(t).publicKey;
  const key = createPublicKey(t);
  if (key.type !== 'public') throw new Error('a JWT verification key must be public');
  return key;
}

/**
 * Verifies bearer JWTs as the federation issues them: signed with a CN's key (RS256), an
 * expiry (`exp`, or `issuedAt`/`iat` + `ttl` as DataONE tokens carry), the subject in `sub`
 * (or `userId`).
 */
export class JwtVerifier {
  private readonly keys: KeyObject[];
  private readonly algorithms: string[];
  /**
   * Tokens that verified, with the interval they stay acceptable in: a client sends the same
   * token with every request, and a signature check costs more than the rest of a metadata
   * call. Only successes are kept; a hit is re-checked against `now`.
   */
  private readonly verified = new Map<string, { result: { subject: string; payload: JWTPayload }; from: number; until: number }>();
  constructor(private readonly options: JwtOptions) {
    this.keys = options.keys.map(importVerificationKey);
    this.algorithms = [...(options.algorithms ?? DEFAULT_JWT_ALGORITHMS)];
    if (this.algorithms.some((a) => /^(HS|none)/i.test(a))) throw new Error('symmetric JWT algorithms and "none" cannot be allowed with public keys');
  }

  get configured(): boolean {
    return this.keys.length > 0;
  }

  /** The verified token's subject and payload; JwtError when the token is not acceptable. */
  async verify(token: string, now = new Date()): Promise<{ subject: string; payload: JWTPayload }> {
    if (this.keys.length === 0) throw new JwtError('this node accepts no bearer tokens (no JWT keys are configured)');
    const tolerance = this.options.clockToleranceSeconds ?? 60;
    const cached = this.verified.get(token);
    if (cached !== undefined && now.getTime() >= cached.from && now.getTime() <= cached.until) return cached.result;
    let lastError: unknown;
    for (const key of this.keys) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: this.algorithms,
          clockTolerance: tolerance,
          currentDate: now,
          ...(this.options.issuer !== undefined ? { issuer: this.options.issuer } : {}),
        });
        this.checkExpiry(payload, now, tolerance);
        const subject = typeof payload.sub === 'string' && payload.sub ? payload.sub : typeof payload['userId'] === 'string' ? (payload['userId'] as string) : '';
        if (!subject) throw new JwtError('the token names no subject (sub or userId)');
        const result = { subject, payload };
        this.remember(token, result, tolerance);
        return result;
      } catch (err) {
        if (err instanceof JwtError) throw err;
        if (err instanceof errors.JWTExpired) throw new JwtError('the token has expired');
        if (err instanceof errors.JWTClaimValidationFailed) throw new JwtError(`the token's ${err.claim} claim is not acceptable: ${err.message}`);
        if (err instanceof errors.JOSEAlgNotAllowed) throw new JwtError(`the token's algorithm is not accepted (allowed: ${this.algorithms.join(', ')})`);
        if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) throw new JwtError(`malformed token: ${err.message}`);
        // signature mismatch or a key of another type: try the next key
        lastError = err;
      }
    }
    void lastError;
    throw new JwtError('the token signature does not verify against any trusted key');
  }

  private remember(token: string, result: { subject: string; payload: JWTPayload }, tolerance: number): void {
    const { payload } = result;
    const until = typeof payload.exp === 'number' ? payload.exp * 1000 : this.issuedAt(payload) + Number(payload['ttl']) * 1000;
    const from = typeof payload.nbf === 'number' ? payload.nbf * 1000 - tolerance * 1000 : -Infinity;
    if (!Number.isFinite(until)) return;
    this.verified.delete(token);
    this.verified.set(token, { result, from, until: until + tolerance * 1000 });
    if (this.verified.size > VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value as string);
  }

  private issuedAt(payload: JWTPayload): number {
    const issuedAtClaim = payload['issuedAt'];
    return typeof issuedAtClaim === 'string' ? Date.parse(issuedAtClaim) : typeof payload.iat === 'number' ? payload.iat * 1000 : NaN;
  }

  private checkExpiry(payload: JWTPayload, now: Date, tolerance: number): void {
    if (typeof payload.exp === 'number') return; // checked by jose
    const ttl = Number(payload['ttl']);
    const issued = this.issuedAt(payload);
    if (!Number.isFinite(ttl) || !Number.isFinite(issued)) throw new JwtError('the token carries no expiry (exp, or issuedAt and ttl)');
    if (now.getTime() > issued + ttl * 1000 + tolerance * 1000) throw new JwtError('the token has expired');
  }
}
