import { BasicConstraintsExtension, X509Certificate } from '@peculiar/x509';
import { SubjectInfoCodec, type SubjectInfo } from '@memberkit/types';
import { readTlv } from './der.js';
import { certificateNames, nameToRfc2253 } from './rfc2253.js';

/** The DataONE SubjectInfo certificate extension: a UTF8String holding a SubjectInfo document. */
export const SUBJECT_INFO_OID = '1.3.6.1.4.1.34998.2.1';

/**
 * Certificates in PEM text (one or more blocks). Also reads what reverse proxies forward:
 * URL-encoded PEM (nginx `$ssl_client_escaped_cert`), PEM whose newlines became spaces or
 * tabs (Apache `SSL_CLIENT_CERT` in a header), or one bare base64 DER certificate.
 */
export function parseCertificates(text: string): X509Certificate[] {
  let t = text.trim();
  if (/%[0-9A-Fa-f]{2}/.test(t)) t = decodeURIComponent(t);
  const blocks = [...t.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) => m[1]!.replace(/\s+/g, ''));
  if (blocks.length === 0 && /^[A-Za-z0-9+/=\s]+$/.test(t)) blocks.push(t.replace(/\s+/g, ''));
  if (blocks.length === 0) throw new Error('no certificate found');
  return blocks.map((b) => new X509Certificate(Buffer.from(b, 'base64')));
}

export function derOf(cert: X509Certificate): Uint8Array {
  return new Uint8Array(cert.rawData);
}

/** A certificate's subject in the federation's RFC 2253 form. */
export function subjectOf(cert: X509Certificate): string {
  return nameToRfc2253(certificateNames(derOf(cert)).subject);
}

function issuerOf(cert: X509Certificate): string {
  return nameToRfc2253(certificateNames(derOf(cert)).issuer);
}

function validAt(cert: X509Certificate, now: Date): string | undefined {
  if (now < cert.notBefore) return `certificate '${subjectOf(cert)}' is not valid before ${cert.notBefore.toISOString()}`;
  if (now > cert.notAfter) return `certificate '${subjectOf(cert)}' expired at ${cert.notAfter.toISOString()}`;
  return undefined;
}

function isCa(cert: X509Certificate): boolean {
  const bc = cert.getExtension(BasicConstraintsExtension);
  return bc?.ca === true;
}

async function signedBy(cert: X509Certificate, issuer: X509Certificate): Promise<boolean> {
  try {
    return await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/**
 * Verify `leaf` against the trusted CA certificates, through the intermediates presented
 * with it: each link's signature, each certificate's validity period at `now`, and that
 * every intermediate is a CA. Returns undefined when the chain verifies, else why not.
 */
export async function verifyChain(leaf: X509Certificate, intermediates: readonly X509Certificate[], trusted: readonly X509Certificate[], now = new Date()): Promise<string | undefined> {
  if (trusted.length === 0) return 'no certificate authorities are configured for client certificates';
  let current = leaf;
  const expired = validAt(leaf, now);
  if (expired) return expired;
  for (let depth = 0; depth < 10; depth++) {
    const issuerName = issuerOf(current);
    for (const ca of trusted) {
      if (subjectOf(ca) === issuerName && (await signedBy(current, ca))) return validAt(ca, now);
    }
    let next: X509Certificate | undefined;
    for (const c of intermediates) {
      if (c !== current && subjectOf(c) === issuerName && isCa(c) && (await signedBy(current, c))) {
        next = c;
        break;
      }
    }
    if (!next) return `certificate '${subjectOf(current)}' is not issued by a trusted certificate authority`;
    const invalid = validAt(next, now);
    if (invalid) return invalid;
    current = next;
  }
  return 'certificate chain too long';
}

/** The SubjectInfo the certificate carries in the DataONE extension, if any. */
export function subjectInfoOf(cert: X509Certificate): SubjectInfo | undefined {
  const ext = cert.extensions.find((e) => e.type === SUBJECT_INFO_OID);
  if (!ext) return undefined;
  const bytes = new Uint8Array(ext.value);
  let xml: string;
  try {
    const t = readTlv(bytes);
    xml = Buffer.from(t.tag === 0x0c ? t.value : bytes).toString('utf8');
  } catch {
    xml = Buffer.from(bytes).toString('utf8');
  }
  return SubjectInfoCodec.decode(xml);
}

/**
 * The subjects a SubjectInfo adds to `primary`: the person entries reachable from it through
 * equivalentIdentity (in either direction), the groups those persons are members of
 * (isMemberOf, or a group's hasMember), and `verifiedUser` when the primary person is verified.
 * Entries for unrelated subjects are ignored.
 */
export function subjectsFromSubjectInfo(primary: string, info: SubjectInfo): string[] {
  const persons = new Map(info.person.map((p) => [p.subject, p]));
  const reached = new Set<string>([primary]);
  const queue = [primary];
  while (queue.length) {
    const s = queue.shift()!;
    const neighbours = [...(persons.get(s)?.equivalentIdentity ?? []), ...info.person.filter((p) => p.equivalentIdentity.includes(s)).map((p) => p.subject)];
    for (const n of neighbours) {
      if (!reached.has(n)) {
        reached.add(n);
        queue.push(n);
      }
    }
  }
  const out = new Set<string>(reached);
  for (const s of reached) for (const g of persons.get(s)?.isMemberOf ?? []) out.add(g);
  for (const g of info.group) if (g.hasMember.some((m) => reached.has(m))) out.add(g.subject);
  if (persons.get(primary)?.verified) out.add('verifiedUser');
  out.delete(primary);
  return [...out];
}
