import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';

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
  /**
   * A JSON Web Key Set URL (a memberkit CN publishes its token key at `{cn}/v2/tokens/keys`)
   * whose keys are trusted beside `keys`: read on first use, re-read after 10 minutes, and
   * sooner (at most every 30 s) when a token names a key id the set does not hold, so a
   * CN's new key is accepted without a restart.
   */
  jwksUrl?: string;
  /** Timeout of a key set read, in milliseconds. Default 5000. */
  jwksTimeoutMs?: number;
  /** Least time between two reads of the key set caused by an unknown key id, in milliseconds. Default 30000. */
  jwksCooldownMs?: number;
}

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;

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
  private readonly remote: RemoteKeys | undefined;
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
    if (options.jwksUrl !== undefined) {
      let url: URL;
      try {
        url = new URL(options.jwksUrl);
      } catch {
        throw new Error(`auth.jwt.jwksUrl: '${options.jwksUrl}' is not a URL`);
      }
      this.remote = createRemoteJWKSet(url, { timeoutDuration: options.jwksTimeoutMs ?? 5000, cooldownDuration: options.jwksCooldownMs ?? 30_000 });
    }
  }

  get configured(): boolean {
    return this.keys.length > 0 || this.remote !== undefined;
  }

  /** The verified token's subject and payload; JwtError when the token is not acceptable. */
  async verify(token: string, now = new Date()): Promise<{ subject: string; payload: JWTPayload }> {
    if (!this.configured) throw new JwtError('this node accepts no bearer tokens (no JWT keys are configured)');
    const tolerance = this.options.clockToleranceSeconds ?? 60;
    const cached = this.verified.get(token);
    if (cached !== undefined && now.getTime() >= cached.from && now.getTime() <= cached.until) return cached.result;
    const options = {
      algorithms: this.algorithms,
      clockTolerance: tolerance,
      currentDate: now,
      ...(this.options.issuer !== undefined ? { issuer: this.options.issuer } : {}),
    };
    // The configured keys first (no network), then the published key set.
    const keys: Array<KeyObject | RemoteKeys> = this.remote ? [...this.keys, this.remote] : this.keys;
    for (const key of keys) {
      try {
        const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
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
        if (key === this.remote) this.remoteProblem(err);
        // signature mismatch or a key of another type: try the next key
      }
    }
    throw new JwtError('the token signature does not verify against any trusted key');
  }

  /** A failure of the published key set that is not a plain signature mismatch, said as such. */
  private remoteProblem(err: unknown): void {
    const url = this.options.jwksUrl;
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys || err instanceof errors.JWSSignatureVerificationFailed) return;
    if (err instanceof errors.JWKSTimeout) throw new JwtError(`the token keys published at ${url} could not be read in time`);
    if (err instanceof errors.JWKSInvalid || err instanceof errors.JOSEError) throw new JwtError(`the token keys published at ${url} are not usable: ${err.message}`);
    throw new JwtError(`the token keys published at ${url} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
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
