import { children, decodeOid, decodeString, readTlv } from './der.js';

/**
 * Attribute types written by their short name in RFC 2253 strings (RFC 2253 §2.3, plus
 * STREET, DC and UID), as the federation's subjects are written (Java's
 * `X500Principal.getName(RFC2253)`); any other type is written as its dotted OID with the
 * value as `#` + the hex of its BER encoding.
 */
export const RFC2253_SHORT_NAMES: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.6': 'C',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

/** Escape an attribute value as RFC 2253 §2.4 asks. */
export function escapeRfc2253Value(value: string): string {
  const chars = [...value];
  return chars
    .map((c, i) => {
      if (',+"\\<>;'.includes(c)) return `\\${c}`;
      if (i === 0 && (c === '#' || c === ' ')) return `\\${c}`;
      if (i === chars.length - 1 && c === ' ') return '\\ ';
      return c;
    })
    .join('');
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/**
 * An X.501 Name (DER, the SEQUENCE of RDNs) in RFC 2253 form: RDNs in reverse order
 * (most specific first), separated by `,`; the attributes of a multi-valued RDN joined by `+`.
 */
export function nameToRfc2253(nameDer: Uint8Array): string {
  const name = readTlv(nameDer);
  if (name.tag !== 0x30) throw new Error('a Name is a SEQUENCE');
  const rdns = children(name.value).map((set) => {
    if (set.tag !== 0x31) throw new Error('an RDN is a SET');
    return children(set.value)
      .map((atv) => {
        const [type, value] = children(atv.value);
        if (!type || !value || type.tag !== 0x06) throw new Error('malformed AttributeTypeAndValue');
        const oid = decodeOid(type.value);
        const short = RFC2253_SHORT_NAMES[oid];
        const text = short ? decodeString(value) : undefined;
        return text === undefined ? `${short ?? oid}=#${hex(value.raw)}` : `${short}=${escapeRfc2253Value(text)}`;
      })
      .join('+');
  });
  return rdns.reverse().join(',');
}

/** The tbsCertificate's issuer and subject Names (DER) of a certificate (DER). */
export function certificateNames(certDer: Uint8Array): { issuer: Uint8Array; subject: Uint8Array } {
  const cert = readTlv(certDer);
  const [tbs] = children(cert.value);
  if (!tbs) throw new Error('malformed certificate');
  const fields = children(tbs.value);
  // version [0] EXPLICIT is optional
  const i = fields[0]?.tag === 0xa0 ? 1 : 0;
  // serialNumber, signature, issuer, validity, subject
  const issuer = fields[i + 2];
  const subject = fields[i + 4];
  if (!issuer || !subject) throw new Error('malformed certificate');
  return { issuer: issuer.raw, subject: subject.raw };
}

/** A certificate's subject in the federation's RFC 2253 form. */
export function certificateSubject(certDer: Uint8Array): string {
  return nameToRfc2253(certificateNames(certDer).subject);
}
