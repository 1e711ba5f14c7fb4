import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { inject, injectable } from 'inversify';
import type { Keyv } from 'keyv';
import type { X509Certificate } from '@peculiar/x509';
import type { SubjectInfo } from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import type { LocalSubjectsHandle } from '../container.js';
import { fail, type Operation } from '../errors.js';
import type { Logger } from '../logger.js';
import { authenticatedSession, publicSession, type Session } from '../session.js';
import { TOKENS } from '../tokens.js';
import { parseCertificates, subjectInfoOf, subjectOf, subjectsFromSubjectInfo, verifyChain } from '../identity/certificate.js';
import { CnSubjects } from '../identity/cn-subjects.js';
import { JwtError, JwtVerifier } from '../identity/jwt.js';
import { SubjectInfoLookup } from '../identity/subject-info.js';

/** What the resolver reads of a request's headers (a fetch Headers, or a view of Node's). */
export type HeaderReader = Pick<Headers, 'get'>;

/** What the resolver reads of a request. */
export interface SessionRequest {
  headers: HeaderReader;
  /** The TLS socket when the node serves HTTPS itself. */
  tlsSocket?: TLSSocket;
  /** The peer's address (the proxy's, behind a reverse proxy). */
  remoteAddress: string;
}

/** A verified credential: the primary subject and, from a certificate, its SubjectInfo. */
interface Credential {
  source: 'certificate' | 'proxy' | 'jwt';
  subject: string;
  /** From the certificate's SubjectInfo extension; undefined when it carries none. */
  subjectInfo?: SubjectInfo;
}

export const DEFAULT_PROXY_HEADER = 'x-ssl-client-cert';

function normaliseAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

/** A BlockList of addresses and CIDRs ("10.0.0.0/8", "::1", "fd00::/8"). */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [addr, prefix] = raw.trim().split('/') as [string, string | undefined];
    const a = normaliseAddress(addr);
    const type = isIPv4(a) ? 'ipv4' : isIPv6(a) ? 'ipv6' : undefined;
    if (!type) throw new Error(`auth.proxy.trustedProxies: '${raw}' is not an IP address or CIDR`);
    if (prefix === undefined) list.addAddress(a, type);
    else list.addSubnet(a, Number(prefix), type);
  }
  return list;
}

/**
 * Who is calling. The sources, in order of precedence:
 * 1. a client certificate presented in the TLS handshake (when the node serves HTTPS itself);
 * 2. a client certificate forwarded by a trusted reverse proxy (a header honoured only from
 *    the addresses in `auth.proxy.trustedProxies`, and ignored from anywhere else);
 * 3. a bearer JWT (`Authorization: Bearer ...`);
 * 4. nothing: the caller is `public`.
 *
 * Conflict rule: every credential presented is verified, and any one that fails verification
 * fails the request with InvalidToken, even when another one is valid (a bad credential
 * never acts as public nor falls back to another identity). When several valid credentials
 * are presented, the first in the order above decides the session; the others add nothing.
 *
 * The session's subjects are the primary subject, its equivalent identities and groups (from
 * the certificate's SubjectInfo extension when it carries one, else from the CN's
 * getSubjectInfo, cached, or from the node's own identity store when it has one: a CN),
 * `authenticatedUser` and `public`. A caller whose subjects include
 * a CN subject of the CN's node list is flagged as a Coordinating Node.
 */
@injectable()
export class SessionResolver {
  private readonly clientCa: X509Certificate[];
  private readonly jwt: JwtVerifier | undefined;
  private readonly proxies: BlockList | undefined;
  private readonly proxyHeader: string;
  private readonly subjectInfo: SubjectInfoLookup | undefined;
  private readonly cnSubjects: CnSubjects | undefined;
  private readonly useExtension: boolean;

  constructor(
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.Cache) cache: Keyv,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.LocalSubjects) private readonly localSubjects: LocalSubjectsHandle = { current: undefined },
  ) {
    const auth = config.auth ?? {};
    this.clientCa = (auth.clientCa ?? []).flatMap((pem) => parseCertificates(pem));
    this.jwt = auth.jwt && (auth.jwt.keys.length > 0 || auth.jwt.jwksUrl !== undefined) ? new JwtVerifier(auth.jwt) : undefined;
    this.proxies = auth.proxy ? addressList(auth.proxy.trustedProxies) : undefined;
    this.proxyHeader = (auth.proxy?.header ?? DEFAULT_PROXY_HEADER).toLowerCase();
    const identity = auth.identity ?? {};
    this.useExtension = identity.useCertificateExtension ?? true;
    const cnBaseUrl = identity.cnBaseUrl ?? config.federation?.cnBaseUrl;
    const ttlMs = (identity.cacheTtlSeconds ?? 3600) * 1000;
    const timeoutMs = identity.timeoutMs ?? 5000;
    if (cnBaseUrl && (identity.lookupSubjectInfo ?? true)) {
      const token = config.federation?.credentials?.token;
      this.subjectInfo = new SubjectInfoLookup({ cnBaseUrl, ttlMs, timeoutMs, cache, logger, ...(token ? { token } : {}) });
    }
    if (cnBaseUrl && (identity.cnSubjectsFromNodeList ?? true)) this.cnSubjects = new CnSubjects({ cnBaseUrl, ttlMs, timeoutMs, cache, logger });
  }

  resolve(op: Operation, request: SessionRequest): Session | Promise<Session> {
    // A caller presenting nothing (most reads) is public at once: no promise on that path.
    if (!request.tlsSocket && request.headers.get('authorization') === null && (this.proxies === undefined || request.headers.get(this.proxyHeader) === null)) {
      return publicSession();
    }
    return this.#resolve(op, request);
  }

  async #resolve(op: Operation, request: SessionRequest): Promise<Session> {
    const credentials: Credential[] = [];
    const tls = this.fromTls(op, request.tlsSocket);
    if (tls) credentials.push(tls);
    const proxied = await this.fromProxy(op, request);
    if (proxied) credentials.push(proxied);
    const bearer = await this.fromBearer(op, request.headers);
    if (bearer) credentials.push(bearer);
    const chosen = credentials[0];
    if (!chosen) return publicSession();
    return this.sessionFor(chosen);
  }

  /**
   * The caller's address for the event log: the socket's peer, or, when that peer is a
   * trusted proxy, the nearest address the proxies recorded in X-Forwarded-For that is not
   * itself a trusted proxy (only trusted proxies' word is taken).
   */
  clientAddress(remoteAddress: string, headers: HeaderReader): string {
    const peer = normaliseAddress(remoteAddress);
    if (!this.proxies || !this.#trusted(peer)) return peer;
    const hops = (headers.get('x-forwarded-for') ?? '').split(',').map((h) => normaliseAddress(h.trim())).filter((h) => h !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!this.#trusted(hops[i]!)) return hops[i]!;
    }
    return peer;
  }

  /** A proxy this node trusts to say who its client is (a method, not a closure per request). */
  #trusted(address: string): boolean {
    return isIP(address) !== 0 && this.proxies!.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  }

  private async sessionFor(credential: Credential): Promise<Session> {
    let info = credential.subjectInfo;
    // A node with its own identity store (a CN) expands the subject there, not at a remote CN.
    const local = this.localSubjects.current;
    if (!info && !local && this.subjectInfo) info = await this.subjectInfo.lookup(credential.subject);
    const extra = info ? subjectsFromSubjectInfo(credential.subject, info) : [];
    if (local) for (const s of await local.expand(credential.subject)) if (s !== credential.subject) extra.push(s);
    const session = authenticatedSession(credential.subject, extra);
    if (this.cnSubjects) {
      const cns = await this.cnSubjects.subjects();
      if ([...session.subjects].some((s) => cns.has(s))) session.coordinatingNode = true;
    }
    return session;
  }

  private fromTls(op: Operation, socket: TLSSocket | undefined): Credential | undefined {
    if (!socket || typeof socket.getPeerCertificate !== 'function') return undefined;
    const peer = socket.getPeerCertificate(false);
    if (!peer || !peer.raw) return undefined;
    if (!socket.authorized) {
      throw fail(op, 'InvalidToken', `the client certificate was not accepted: ${String(socket.authorizationError ?? 'not issued by a trusted certificate authority')}`);
    }
    return this.certificateCredential(op, 'certificate', peer.raw.toString('base64'));
  }

  private async fromProxy(op: Operation, request: SessionRequest): Promise<Credential | undefined> {
    const proxy = this.config.auth?.proxy;
    const value = request.headers.get(this.proxyHeader);
    if (!proxy || !this.proxies || value === null || value.trim() === '' || value.trim() === '(null)') return undefined;
    const address = normaliseAddress(request.remoteAddress);
    if (!this.proxies.check(address, isIPv6(address) ? 'ipv6' : 'ipv4')) {
      this.logger.debug({ address, header: this.proxyHeader }, 'client certificate header from an untrusted address ignored');
      return undefined;
    }
    if (proxy.verifyHeader) {
      const verdict = request.headers.get(proxy.verifyHeader);
      if (verdict !== (proxy.verifyValue ?? 'SUCCESS')) throw fail(op, 'InvalidToken', `the proxy did not verify the client certificate (${proxy.verifyHeader}: ${verdict ?? 'absent'})`);
    }
    let certs: X509Certificate[];
    try {
      certs = parseCertificates(value);
    } catch (err) {
      throw fail(op, 'InvalidToken', `the forwarded client certificate cannot be read: ${(err as Error).message}`);
    }
    const [leaf, ...chain] = certs;
    const problem = await verifyChain(leaf!, chain, this.clientCa);
    if (problem) throw fail(op, 'InvalidToken', `the forwarded client certificate was not accepted: ${problem}`);
    return this.certificateCredential(op, 'proxy', leaf!);
  }

  private certificateCredential(op: Operation, source: 'certificate' | 'proxy', cert: X509Certificate | string): Credential {
    try {
      const leaf = typeof cert === 'string' ? parseCertificates(cert)[0]! : cert;
      const subject = subjectOf(leaf);
      const info = this.useExtension ? subjectInfoOf(leaf) : undefined;
      return { source, subject, ...(info ? { subjectInfo: info } : {}) };
    } catch (err) {
      throw fail(op, 'InvalidToken', `the client certificate cannot be read: ${(err as Error).message}`);
    }
  }

  private async fromBearer(op: Operation, headers: HeaderReader): Promise<Credential | undefined> {
    const auth = headers.get('authorization');
    if (auth === null) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m) throw fail(op, 'InvalidToken', 'the Authorization header must be "Bearer <token>"');
    if (!this.jwt) throw fail(op, 'InvalidToken', 'this node accepts no bearer tokens (no JWT keys are configured)');
    try {
      const { subject } = await this.jwt.verify(m[1]!);
      return { source: 'jwt', subject };
    } catch (err) {
      if (err instanceof JwtError) throw fail(op, 'InvalidToken', `the bearer token is not valid on this node: ${err.message}`);
      throw err;
    }
  }
}
