import { escapeRfc2253Value, RFC2253_SHORT_NAMES } from '@memberkit/core';

/**
 * Subjects as the CN's identity store compares them. The federation writes a subject either as
 * an X.500 distinguished name (from a certificate, in RFC 2253 form as Java's
 * `X500Principal.getName(RFC2253)` and the core's `certificateSubject` write it) or as an ORCID
 * URL (`https://orcid.org/0000-0002-1825-0097`). Two spellings of one name (`CN=A, DC=b` and
 * `cn=A,dc=b`, `http://orcid.org/...` and `https://orcid.org/...`) are one subject: every
 * subject is normalised before it is stored or looked up.
 */

/** Subjects every session has or may have; never an account, a group, a member or an owner. */
export const RESERVED_SUBJECTS: ReadonlySet<string> = new Set(['public', 'authenticatedUser', 'verifiedUser']);

/** The subject a verified account's sessions also act as (see SubjectDirectory.expand). */
export const VERIFIED_USER = 'verifiedUser';

/** Longest subject the identity tables hold (MySQL's subject columns are VARBINARY(1000)). */
export const MAX_SUBJECT_BYTES = 1000;

const ORCID_URL = /^https?:\/\/(?:www\.)?orcid\.org\/(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])\/?$/i;

/** ISO 7064 MOD 11-2 check character of an ORCID iD's first 15 digits. */
function orcidCheck(digits: string): string {
  let total = 0;
  for (const d of digits) total = (total + Number(d)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

/**
 * `https://orcid.org/XXXX-XXXX-XXXX-XXXX` for an ORCID URL (http or https, with or without
 * `www.` or a trailing slash), or undefined when `subject` is not one.
 */
export function normaliseOrcid(subject: string): string | undefined {
  const m = ORCID_URL.exec(subject.trim());
  if (!m) return undefined;
  return `https://orcid.org/${m[1]!.toUpperCase()}`;
}

/** Why an ORCID URL's iD is not a valid ORCID iD (wrong check digit), or undefined. */
export function orcidProblem(orcidUrl: string): string | undefined {
  const id = orcidUrl.slice(orcidUrl.lastIndexOf('/') + 1);
  const digits = id.replaceAll('-', '');
  const expected = orcidCheck(digits.slice(0, 15));
  if (digits[15] !== expected) return `'${id}' is not a valid ORCID iD: its check character should be ${expected}`;
  return undefined;
}

/** One attribute of a relative distinguished name, as parsed. */
interface Attribute {
  type: string;
  /** The value text (escapes resolved), or the `#hex` BER form kept as written. */
  value: string;
  hex: boolean;
}

/** RFC 2253's short names (the core's table, by OID: a DN may spell a type as its OID, `OID.2.5.4.3` or `2.5.4.3`). */
const OID_NAMES = RFC2253_SHORT_NAMES;
const SHORT_NAMES = new Set(Object.values(OID_NAMES));

/** Keywords Java accepts for the PKCS#9 e-mail address; RFC 2253 output writes its OID and BER. */
const EMAIL_OID = '1.2.840.113549.1.9.1';
const EMAIL_KEYWORDS = new Set(['E', 'EMAIL', 'EMAILADDRESS']);

const ATTRIBUTE_TYPE = /^(?:[A-Za-z][A-Za-z0-9-]*|(?:OID\.)?\d+(?:\.\d+)*)$/i;

/**
 * Parses a DN string (RFC 4514 / RFC 2253, with RFC 1779's tolerance for spaces around
 * separators, `;` as a separator and quoted values). Undefined when `text` is not a DN.
 */
function parseDn(text: string): Attribute[][] | undefined {
  const rdns: Attribute[][] = [];
  let rdn: Attribute[] = [];
  let i = 0;
  const n = text.length;
  const skipSpaces = () => {
    while (i < n && text[i] === ' ') i++;
  };
  for (;;) {
    skipSpaces();
    const eq = text.indexOf('=', i);
    if (eq < 0) return undefined;
    const type = text.slice(i, eq).trim();
    if (!ATTRIBUTE_TYPE.test(type)) return undefined;
    i = eq + 1;
    skipSpaces();
    let value: string;
    let hex = false;
    if (text[i] === '#') {
      const m = /^#(?:[0-9A-Fa-f]{2})+/.exec(text.slice(i));
      if (!m) return undefined;
      value = m[0].toLowerCase();
      hex = true;
      i += m[0].length;
      skipSpaces();
    } else if (text[i] === '"') {
      i++;
      const bytes: number[] = [];
      for (;;) {
        if (i >= n) return undefined;
        const c = text[i]!;
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const step = readEscape(text, i, bytes);
          if (step === 0) return undefined;
          i += step;
          continue;
        }
        pushText(bytes, c);
        i++;
      }
      value = Buffer.from(bytes).toString('utf8');
      skipSpaces();
    } else {
      const bytes: number[] = [];
      // Unescaped trailing spaces are not part of the value: remember where the value last
      // ended on a character that counts.
      let keep = 0;
      while (i < n && !',;+'.includes(text[i]!)) {
        const c = text[i]!;
        if (c === '\\') {
          const step = readEscape(text, i, bytes);
          if (step === 0) return undefined;
          i += step;
          keep = bytes.length;
          continue;
        }
        if (c === '"' || c === '<' || c === '>' || (c === '=' && bytes.length === 0)) return undefined;
        pushText(bytes, c);
        if (c !== ' ') keep = bytes.length;
        i++;
      }
      value = Buffer.from(bytes.slice(0, keep)).toString('utf8');
    }
    rdn.push({ type, value, hex });
    if (i >= n) {
      rdns.push(rdn);
      return rdns;
    }
    const sep = text[i]!;
    if (sep === '+') {
      i++;
      continue;
    }
    if (sep === ',' || sep === ';') {
      rdns.push(rdn);
      rdn = [];
      i++;
      continue;
    }
    return undefined;
  }
}

function pushText(bytes: number[], c: string): void {
  for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
}

/** Reads the escape at `text[i]` ('\\'): its bytes go to `bytes`; returns its length, 0 when malformed. */
function readEscape(text: string, i: number, bytes: number[]): number {
  const next = text[i + 1];
  if (next === undefined) return 0;
  const pair = text.slice(i + 1, i + 3);
  if (/^[0-9A-Fa-f]{2}$/.test(pair)) {
    bytes.push(parseInt(pair, 16));
    return 3;
  }
  // Any other escaped character stands for itself (a surrogate pair is one code point).
  const cp = text.codePointAt(i + 1)!;
  const ch = String.fromCodePoint(cp);
  pushText(bytes, ch);
  return 1 + ch.length;
}

/** The BER encoding of an IA5String, as `#hex` (how RFC 2253 writes an e-mail attribute). */
function ia5Hex(value: string): string {
  const body = Buffer.from(value, 'latin1');
  const len = body.length < 0x80 ? Buffer.from([body.length]) : body.length < 0x100 ? Buffer.from([0x81, body.length]) : Buffer.from([0x82, body.length >> 8, body.length & 0xff]);
  return '#' + Buffer.concat([Buffer.from([0x16]), len, body]).toString('hex');
}

function normaliseAttribute(a: Attribute): string {
  let type = a.type.toUpperCase().replace(/^OID\./, '');
  type = OID_NAMES[type] ?? type;
  if (EMAIL_KEYWORDS.has(type) || type === EMAIL_OID) {
    // Non-ASCII cannot be an IA5String: keep such a value as text under the OID.
    if (!a.hex && /^[\x00-\x7f]*$/.test(a.value)) return `${EMAIL_OID}=${ia5Hex(a.value)}`;
    type = EMAIL_OID;
  }
  if (a.hex) return `${type}=${a.value}`;
  return `${type}=${escapeRfc2253Value(a.value)}`;
}

/**
 * A DN in the RFC 2253 form certificates give (`CN=Alice,O=Example,DC=org`): attribute types
 * upper-case short names (OIDs of known types mapped to their names), no spaces around
 * separators, values re-escaped as RFC 2253 §2.4 asks. Undefined when `subject` is not a DN.
 */
export function normaliseDn(subject: string): string | undefined {
  const rdns = parseDn(subject.trim());
  if (!rdns || rdns.length === 0) return undefined;
  if (rdns.some((rdn) => rdn.some((a) => !a.hex && a.value === '') || rdn.length === 0)) return undefined;
  return rdns.map((rdn) => rdn.map(normaliseAttribute).join('+')).join(',');
}

export type SubjectKind = 'orcid' | 'dn' | 'other';

/**
 * The one spelling of `subject` the identity store uses: an ORCID URL as
 * `https://orcid.org/<iD>`, a DN in RFC 2253 form, anything else trimmed.
 */
export function normaliseSubject(subject: string): string {
  const trimmed = subject.trim();
  return normaliseOrcid(trimmed) ?? normaliseDn(trimmed) ?? trimmed;
}

/** Which kind of subject a normalised subject is. */
export function subjectKind(normalised: string): SubjectKind {
  if (normaliseOrcid(normalised) !== undefined) return 'orcid';
  if (normaliseDn(normalised) !== undefined) return 'dn';
  return 'other';
}

/** Why `subject` (normalised) cannot name anything in the identity store, or undefined. */
export function subjectProblem(subject: string, what: string): string | undefined {
  if (subject === '') return `${what} must not be empty`;
  if (RESERVED_SUBJECTS.has(subject)) return `${what} '${subject}' is a subject every session has; it cannot be used here`;
  if (Buffer.byteLength(subject, 'utf8') > MAX_SUBJECT_BYTES) return `${what} is longer than ${MAX_SUBJECT_BYTES} bytes`;
  if (/[\u0000-\u001f\u007f]/.test(subject)) return `${what} must not contain control characters`;
  return undefined;
}

/**
 * Why `subject` (normalised) cannot be an account: accounts are people, named by a DN or an
 * ORCID URL. Undefined when it can.
 */
export function accountSubjectProblem(subject: string, what = 'the subject'): string | undefined {
  const problem = subjectProblem(subject, what);
  if (problem) return problem;
  const kind = subjectKind(subject);
  if (kind === 'orcid') return orcidProblem(subject);
  if (kind === 'dn') return undefined;
  return `${what} '${subject}' is neither a distinguished name (e.g. CN=Jane Doe,O=Example,C=US,DC=cilogon,DC=org) nor an ORCID URL (e.g. https://orcid.org/0000-0002-1825-0097)`;
}
