// Test PKI: CAs and client/server certificates generated with @peculiar/x509 over node's
// webcrypto, including the DataONE SubjectInfo extension.
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export type NameSpec = string | x509.JsonName;

export interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  /** Certificate PEM. */
  pem: string;
  /** Private key PEM (PKCS#8). */
  keyPem: string;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as unknown as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

/** DER of a UTF8String holding `text`. */
export function utf8StringDer(text: string): Uint8Array {
  const body = Buffer.from(text, 'utf8');
  const len = body.length < 128 ? Buffer.from([body.length]) : body.length < 256 ? Buffer.from([0x81, body.length]) : Buffer.from([0x82, body.length >> 8, body.length & 0xff]);
  return new Uint8Array(Buffer.concat([Buffer.from([0x0c]), len, body]));
}

let serial = 1;

export async function createCa(name: NameSpec): Promise<Issued> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: (serial++).toString(16).padStart(2, '0'),
    name,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 30 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  return { cert, keys, pem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

export interface IssueOptions {
  notBefore?: Date;
  notAfter?: Date;
  /** A SubjectInfo XML document for the DataONE extension. */
  subjectInfoXml?: string;
  /** Server certificate for these IP addresses (else a client certificate). */
  serverIps?: string[];
}

export async function issue(ca: Issued, name: NameSpec, options: IssueOptions = {}): Promise<Issued> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.ExtendedKeyUsageExtension([options.serverIps ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
  ];
  if (options.serverIps) extensions.push(new x509.SubjectAlternativeNameExtension(options.serverIps.map((ip) => ({ type: 'ip' as const, value: ip }))));
  if (options.subjectInfoXml !== undefined) extensions.push(new x509.Extension('1.3.6.1.4.1.34998.2.1', false, utf8StringDer(options.subjectInfoXml)));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(2, '0'),
    subject: name,
    issuer: ca.cert.subjectName,
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 10 * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return { cert, keys, pem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

/** A JsonName in ASN.1 order from an RFC 2253 listing (most specific first), e.g. [['CN','Jane'],['O','Google']]. */
export function dn(...rdns: Array<[string, string]>): x509.JsonName {
  return rdns.reverse().map(([type, value]) => ({ [type]: [value] }));
}
