import { describe, expect, it } from 'vitest';
import { certificateSubject, escapeRfc2253Value, nameToRfc2253, parseCertificates, subjectOf } from '@memberkit/core';
import { createCa, dn, issue } from './pki.js';

const der = (c: { rawData: ArrayBuffer }) => new Uint8Array(c.rawData);

describe('RFC 2253 subjects', () => {
  it('writes a CILogon DN the way the federation does (reversed RDN order, short names)', async () => {
    const ca = await createCa(dn(['CN', 'CILogon Basic CA 1'], ['O', 'CILogon'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
    const jane = await issue(ca, dn(['CN', 'Jane Doe A123'], ['O', 'Google'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
    expect(certificateSubject(der(jane.cert))).toBe('CN=Jane Doe A123,O=Google,C=US,DC=cilogon,DC=org');
    expect(subjectOf(jane.cert)).toBe('CN=Jane Doe A123,O=Google,C=US,DC=cilogon,DC=org');
    expect(subjectOf(ca.cert)).toBe('CN=CILogon Basic CA 1,O=CILogon,C=US,DC=cilogon,DC=org');
  });

  it('writes DataONE node and service DNs, L/ST/OU/STREET/UID', async () => {
    const ca = await createCa(dn(['CN', 'DataONE Test CA'], ['DC', 'dataone'], ['DC', 'org']));
    const node = await issue(ca, dn(['CN', 'urn:node:KNB'], ['DC', 'dataone'], ['DC', 'org']));
    expect(subjectOf(node.cert)).toBe('CN=urn:node:KNB,DC=dataone,DC=org');
    const all = await issue(ca, dn(['0.9.2342.19200300.100.1.1', 'jdoe'], ['CN', 'Jane'], ['OU', 'Lab'], ['O', 'Uni'], ['2.5.4.9', '1 Main St'], ['L', 'Santa Barbara'], ['ST', 'California'], ['C', 'US']));
    expect(subjectOf(all.cert)).toBe('UID=jdoe,CN=Jane,OU=Lab,O=Uni,STREET=1 Main St,L=Santa Barbara,ST=California,C=US');
  });

  it('escapes , + " \\ < > ; and a leading # or space and a trailing space', async () => {
    expect(escapeRfc2253Value('Doe, Jane')).toBe('Doe\\, Jane');
    expect(escapeRfc2253Value('a+b"c\\d<e>f;g')).toBe('a\\+b\\"c\\\\d\\<e\\>f\\;g');
    expect(escapeRfc2253Value('#1')).toBe('\\#1');
    expect(escapeRfc2253Value(' lead')).toBe('\\ lead');
    expect(escapeRfc2253Value('trail ')).toBe('trail\\ ');
    expect(escapeRfc2253Value('mid#dle mid')).toBe('mid#dle mid');
    const ca = await createCa(dn(['CN', 'CA']));
    const odd = await issue(ca, dn(['CN', 'Doe, Jane <x>'], ['O', 'a+b;c'], ['DC', 'org']));
    expect(subjectOf(odd.cert)).toBe('CN=Doe\\, Jane \\<x\\>,O=a\\+b\\;c,DC=org');
  });

  it('writes other attribute types as dotted OID=#hex of the BER value', async () => {
    const ca = await createCa(dn(['CN', 'CA']));
    // emailAddress (1.2.840.113549.1.9.1) is an IA5String: 16 len 'a@b.c'
    const mail = await issue(ca, [{ '1.2.840.113549.1.9.1': ['a@b.c'] }, { CN: ['Jane'] }]);
    const subject = subjectOf(mail.cert);
    expect(subject).toBe('CN=Jane,1.2.840.113549.1.9.1=#16056140622e63');
  });

  it('joins the attributes of a multi-valued RDN with +', async () => {
    const ca = await createCa(dn(['CN', 'CA']));
    const multi = await issue(ca, [{ DC: ['org'] }, { CN: ['Jane'], O: ['jd'] }]);
    expect(subjectOf(multi.cert)).toMatch(/^(CN=Jane\+O=jd|O=jd\+CN=Jane),DC=org$/);
  });

  it('reads certificates from PEM, URL-encoded PEM, space-joined PEM and bare base64', async () => {
    const ca = await createCa(dn(['CN', 'CA']));
    const jane = await issue(ca, dn(['CN', 'Jane'], ['DC', 'org']));
    const pem = jane.pem;
    expect(subjectOf(parseCertificates(pem)[0]!)).toBe('CN=Jane,DC=org');
    expect(subjectOf(parseCertificates(encodeURIComponent(pem))[0]!)).toBe('CN=Jane,DC=org');
    expect(subjectOf(parseCertificates(pem.replace(/\n/g, ' '))[0]!)).toBe('CN=Jane,DC=org');
    expect(subjectOf(parseCertificates(Buffer.from(jane.cert.rawData).toString('base64'))[0]!)).toBe('CN=Jane,DC=org');
    expect(parseCertificates(pem + ca.pem)).toHaveLength(2);
    expect(nameToRfc2253(new Uint8Array([0x30, 0x00]))).toBe('');
  });
});
