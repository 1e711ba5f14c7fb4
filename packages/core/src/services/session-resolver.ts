import { inject, injectable } from 'inversify';
import type { CoreConfig } from '../config.js';
import { fail, type Operation } from '../errors.js';
import { authenticatedSession, publicSession, type Session } from '../session.js';
import { TOKENS } from '../tokens.js';

/**
 * Who is calling. Until certificate and JWT sessions land, a caller is recognised by a
 * bearer token configured for local use (`access.localTokens`); no credentials means
 * `public`. Credentials that are present but not recognised are InvalidToken, never a
 * silent fall back to public.
 */
@injectable()
export class SessionResolver {
  private readonly tokens: Map<string, string>;
  constructor(@inject(TOKENS.Config) config: CoreConfig) {
    this.tokens = new Map(Object.entries(config.access.localTokens));
  }

  resolve(op: Operation, headers: Headers): Session {
    const auth = headers.get('authorization');
    if (!auth) return publicSession();
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m) throw fail(op, 'InvalidToken', 'the Authorization header must be "Bearer <token>"');
    const subject = this.tokens.get(m[1]!);
    if (subject === undefined) throw fail(op, 'InvalidToken', 'the bearer token is not valid on this node');
    return authenticatedSession(subject);
  }
}
