// Subjects as the CN's identity store compares them: DNs in RFC 2253 form, ORCID URLs in https form.
import { describe, expect, it } from 'vitest';
import { accountSubjectProblem, normaliseDn, normaliseOrcid, normaliseSubject, orcidProblem, subjectKind } from '../src/identity/subjects.js';

describe('DN normalisation (RFC 2253, as certificates give subjects)', () => {
  it('writes one spelling for the spellings of one name', () => {
    const canonical = 'CN=Jane Doe A123,O=Example University,C=US,DC=cilogon,DC=org';
    for (const spelling of [
      canonical,
      'CN=Jane Doe A123, O=Example University, C=US, DC=cilogon, DC=org',
      'cn=Jane Doe A123,o=Example University,c=US,dc=cilogon,dc=org',
      '  CN = Jane Doe A123 ; O=Example University;C=US,DC=cilogon,DC=org  ',
      'OID.2.5.4.3=Jane Doe A123,2.5.4.10=Example University,C=US,0.9.2342.19200300.100.1.25=cilogon,DC=org',
      'CN="Jane Doe A123",O=Example University,C=US,DC=cilogon,DC=org',
    ]) {
      expect(normaliseDn(spelling), spelling).toBe(canonical);
    }
  });

  it('keeps escaped specials and values case, re-escapes as RFC 2253 asks', () => {
    expect(normaliseDn('CN=Doe\\, Jane,O=A\\+B,DC=org')).toBe('CN=Doe\\, Jane,O=A\\+B,DC=org');
    expect(normaliseDn('CN="Doe, Jane",DC=org')).toBe('CN=Doe\\, Jane,DC=org');
    expect(normaliseDn('CN=\\C3\\A9mile,DC=org')).toBe('CN=émile,DC=org');
    expect(normaliseDn('CN=\\ lead,DC=org')).toBe('CN=\\ lead,DC=org');
    expect(normaliseDn('CN=MixedCase,DC=Org')).toBe('CN=MixedCase,DC=Org');
    expect(normaliseDn('CN=a+UID=b,DC=org')).toBe('CN=a+UID=b,DC=org');
  });

  it('writes the e-mail attribute as its OID and BER, as RFC 2253 output of a certificate does', () => {
    expect(normaliseDn('EMAILADDRESS=jd@example.org,CN=Jane')).toBe('1.2.840.113549.1.9.1=#160e6a64406578616d706c652e6f7267,CN=Jane');
    expect(normaliseDn('E=jd@example.org,CN=Jane')).toBe(normaliseDn('1.2.840.113549.1.9.1=#160E6A64406578616D706C652E6F7267,CN=Jane'));
  });

  it('is not fooled by strings that are not DNs', () => {
    for (const s of ['public', 'urn:node:MN1', '', '=x', 'CN=', 'CN=a,,DC=b', 'CN=a<b', 'bad type=x', 'CN=a\\']) {
      expect(normaliseDn(s), s).toBeUndefined();
    }
  });
});

describe('ORCID URLs', () => {
  it('normalises http, www and a trailing slash to https://orcid.org/iD', () => {
    for (const s of ['https://orcid.org/0000-0002-1825-0097', 'http://orcid.org/0000-0002-1825-0097', 'http://www.orcid.org/0000-0002-1825-0097/', ' HTTPS://ORCID.ORG/0000-0002-1825-0097 ']) {
      expect(normaliseOrcid(s), s).toBe('https://orcid.org/0000-0002-1825-0097');
    }
    expect(normaliseOrcid('https://orcid.org/0000-0002-1694-233x')).toBe('https://orcid.org/0000-0002-1694-233X');
    expect(normaliseOrcid('https://orcid.org/0000-0002-1825')).toBeUndefined();
    expect(normaliseOrcid('https://example.org/0000-0002-1825-0097')).toBeUndefined();
  });

  it('checks the ISO 7064 check character', () => {
    expect(orcidProblem('https://orcid.org/0000-0002-1825-0097')).toBeUndefined();
    expect(orcidProblem('https://orcid.org/0000-0002-1694-233X')).toBeUndefined();
    expect(orcidProblem('https://orcid.org/0000-0002-1825-0098')).toMatch(/check character should be 7/);
  });
});

describe('subjects of accounts', () => {
  it('accepts a DN or an ORCID URL, nothing else', () => {
    expect(subjectKind(normaliseSubject('http://orcid.org/0000-0002-1825-0097'))).toBe('orcid');
    expect(subjectKind(normaliseSubject('CN=x, DC=y'))).toBe('dn');
    expect(subjectKind('public')).toBe('other');
    expect(accountSubjectProblem(normaliseSubject('CN=x,DC=y'))).toBeUndefined();
    expect(accountSubjectProblem(normaliseSubject('https://orcid.org/0000-0002-1825-0097'))).toBeUndefined();
    expect(accountSubjectProblem('jane')).toMatch(/neither a distinguished name .* nor an ORCID URL/);
    expect(accountSubjectProblem('public')).toMatch(/every session has/);
    expect(accountSubjectProblem('verifiedUser')).toMatch(/every session has/);
    expect(accountSubjectProblem(normaliseSubject('https://orcid.org/0000-0002-1825-0098'))).toMatch(/check character/);
    expect(accountSubjectProblem(`CN=${'x'.repeat(1200)}`)).toMatch(/longer than 1000 bytes/);
  });
});
