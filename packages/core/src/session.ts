/** The subject every caller has, authenticated or not. */
export const PUBLIC_SUBJECT = 'public';
/** The subject every authenticated caller also has. */
export const AUTHENTICATED_SUBJECT = 'authenticatedUser';

/** Who is calling: the primary subject plus every subject the caller acts as. */
export interface Session {
  /** Primary subject (`public` when anonymous). */
  subject: string;
  /** Primary subject, equivalent identities, groups, `authenticatedUser` and `public`. */
  subjects: ReadonlySet<string>;
  authenticated: boolean;
  /** The caller is one of the federation's Coordinating Nodes per the CN's node list. */
  coordinatingNode?: boolean;
}

export function publicSession(): Session {
  return { subject: PUBLIC_SUBJECT, subjects: new Set([PUBLIC_SUBJECT]), authenticated: false };
}

export function authenticatedSession(subject: string, equivalents: readonly string[] = []): Session {
  return { subject, subjects: new Set([subject, ...equivalents, AUTHENTICATED_SUBJECT, PUBLIC_SUBJECT]), authenticated: true };
}

/** Request facts the services need for logging. */
export interface CallContext {
  session: Session;
  ipAddress: string;
  userAgent: string;
  version: 'v1' | 'v2';
  signal?: AbortSignal;
}

/** Who acts in a call, as its event-log entries name them: the session's primary subject, address and user agent. */
export function actorOf(ctx: CallContext): { subject: string; ipAddress: string; userAgent: string } {
  return { subject: ctx.session.subject, ipAddress: ctx.ipAddress, userAgent: ctx.userAgent };
}
