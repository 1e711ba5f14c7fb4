import { join } from 'node:path';
/** Exceptions: XML bodies (dataoneErrors.xsd), HEAD headers, detail codes. */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../src/decode-error.js';
import * as X from '../src/exceptions.js';
import { DETAIL_CODES } from '../src/generated/detail-codes.data.js';
import { validateMany, type XsdResult } from './xsd.js';

/** The vendored specification (spec/ at the repository root; see spec/README.md). */
const SPEC_DIR = join(import.meta.dirname, '..', '..', '..', 'spec');

const NAMES = Object.keys(X.EXCEPTION_ERROR_CODES) as X.ExceptionName[];
const CLASSES: Record<X.ExceptionName, new (f?: X.ExceptionFields) => X.DataONEException> = {
  AuthenticationTimeout: X.AuthenticationTimeout,
  IdentifierNotUnique: X.IdentifierNotUnique,
  InsufficientResources: X.InsufficientResources,
  InvalidCredentials: X.InvalidCredentials,
  InvalidRequest: X.InvalidRequest,
  InvalidSystemMetadata: X.InvalidSystemMetadata,
  InvalidToken: X.InvalidToken,
  NotAuthorized: X.NotAuthorized,
  NotFound: X.NotFound,
  NotImplemented: X.NotImplemented,
  ServiceFailure: X.ServiceFailure,
  SynchronizationFailed: X.SynchronizationFailed,
  UnsupportedMetadataType: X.UnsupportedMetadataType,
  UnsupportedQueryType: X.UnsupportedQueryType,
  UnsupportedType: X.UnsupportedType,
  VersionMismatch: X.VersionMismatch,
};

const FULL: X.ExceptionFields = {
  description: 'The object "a&b<c>" was not found — café 中文 𝔘\nsecond line\ttabbed',
  detailCode: '1020',
  pid: 'doi:10.5063/F1&<é%2F?#',
  nodeId: 'urn:node:TEST',
  traceInformation: 'at get (server.ts:10)\nat handle (router.ts:20) <&>',
};

type Sample = { label: string; e: X.DataONEException; fields: X.ExceptionFields };
const samples: Sample[] = [];
for (const name of NAMES) {
  samples.push({ label: `${name} minimal`, e: new CLASSES[name](), fields: {} });
  samples.push({ label: `${name} full`, e: new CLASSES[name](FULL), fields: FULL });
}
samples.push({ label: 'control characters in trace', e: new X.ServiceFailure({ description: 'bad\u0000', traceInformation: '\u001b[31mred\u001b[0m' }), fields: {} });
samples.push({ label: 'empty description', e: new X.InvalidRequest({ description: '', detailCode: '1202' }), fields: {} });

let xsd: XsdResult[] = [];
beforeAll(() => {
  xsd = validateMany(samples.map((s) => s.e.toXml()), 'errors');
});

describe('exception classes', () => {
  it.each(NAMES)('%s: class, name, errorCode, defaults', (name) => {
    const e = new CLASSES[name]();
    expect(e).toBeInstanceOf(X.DataONEException);
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(CLASSES[name]);
    expect(CLASSES[name].name).toBe(name);
    expect(e.name).toBe(name);
    expect(e.exceptionName).toBe(name);
    expect(e.errorCode).toBe(X.EXCEPTION_ERROR_CODES[name]);
    expect(e.detailCode).toBe('0');
    expect(e.description).toBe('');
    expect(X.DataONEException.is(e)).toBe(true);
    expect(X.createException(name)).toBeInstanceOf(CLASSES[name]);
    expect(X.isExceptionName(name)).toBe(true);
  });

  it('HTTP statuses follow the spec', () => {
    expect(X.EXCEPTION_ERROR_CODES).toMatchObject({ NotAuthorized: 401, InvalidToken: 401, NotFound: 404, IdentifierNotUnique: 409, InvalidRequest: 400, ServiceFailure: 500, NotImplemented: 501, InsufficientResources: 413 });
  });

  it('withDetailCode keeps the class and the other fields', () => {
    const e = new X.NotFound({ description: 'gone', pid: 'p' }).withDetailCode('1020');
    expect(e).toBeInstanceOf(X.NotFound);
    expect(e.fields()).toMatchObject({ description: 'gone', pid: 'p', detailCode: '1020', errorCode: 404 });
  });

  it('isExceptionName refuses non-names, including inherited properties', () => {
    for (const n of ['Foo', 'toString', 'constructor', '__proto__', '']) expect(X.isExceptionName(n)).toBe(false);
  });
});

describe('XML bodies', () => {
  it.each(samples.map((s, i) => [s.label, i] as const))('%s: validates against dataoneErrors.xsd and decodes to the same exception', (_l, i) => {
    const { e, fields } = samples[i]!;
    expect(xsd[i]!.errors, e.toXml()).toEqual([]);
    const back = X.exceptionFromXml(e.toXml());
    expect(back.constructor).toBe(e.constructor);
    expect(back.exceptionName).toBe(e.exceptionName);
    expect(back.errorCode).toBe(e.errorCode);
    expect(back.detailCode).toBe(e.detailCode);
    if (fields.description !== undefined) expect(back.description).toBe(fields.description);
    if (fields.pid !== undefined) expect(back.pid).toBe(fields.pid);
    if (fields.nodeId !== undefined) expect(back.nodeId).toBe(fields.nodeId);
    if (fields.traceInformation !== undefined) expect(back.traceInformation).toBe(fields.traceInformation);
    if (fields === FULL) expect(back.fields()).toEqual(e.fields());
  });

  it('the body is <error> in no namespace with name, errorCode, detailCode; description before traceInformation', () => {
    const xml = new X.NotFound(FULL).toXml();
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><error name="NotFound" errorCode="404" detailCode="1020" identifier="[^"]+" nodeId="urn:node:TEST"><description>/);
    expect(xml.indexOf('<description>')).toBeLessThan(xml.indexOf('<traceInformation>'));
    expect(xml).not.toMatch(/xmlns/);
  });

  it('control characters never make the body ill-formed', () => {
    const back = X.exceptionFromXml(new X.ServiceFailure({ description: 'a\u0000b', traceInformation: '\u001b[31m' }).toXml());
    expect(back.description).toBe('a\uFFFDb');
    expect(back.traceInformation).toBe('\uFFFD[31m');
  });

  it('an unknown exception name becomes a ServiceFailure that keeps the text', () => {
    const e = X.exceptionFromXml('<error name="TeapotException" errorCode="418" detailCode="7"><description>short and stout</description></error>');
    expect(e).toBeInstanceOf(X.ServiceFailure);
    expect(e.errorCode).toBe(418);
    expect(e.detailCode).toBe('7');
    expect(e.description).toContain('TeapotException');
    expect(e.description).toContain('short and stout');
    expect(X.exceptionFromHeaders({ 'DataONE-Exception-Name': 'Nope', 'DataONE-Exception-Description': 'x' })).toBeInstanceOf(X.ServiceFailure);
  });

  it('reads errors written by other servers (Metacat/GMN shapes)', () => {
    const metacat = `<?xml version="1.0" encoding="UTF-8"?>
<error detailCode="1020" errorCode="404" name="NotFound" pid="urn:uuid:123">
  <description>No system metadata could be found for given PID: urn:uuid:123</description>
</error>`;
    const e = X.exceptionFromXml(metacat);
    expect(e).toBeInstanceOf(X.NotFound);
    expect(e).toMatchObject({ detailCode: '1020', pid: 'urn:uuid:123', description: 'No system metadata could be found for given PID: urn:uuid:123' });
    const gmn = `<?xml version="1.0" encoding="utf-8"?><error detailCode="0" errorCode="401" identifier="p1" name="NotAuthorized" nodeId="urn:node:GMN"><description>Denied</description><traceInformation><value>line</value></traceInformation></error>`;
    const g = X.exceptionFromXml(Buffer.from(gmn));
    expect(g).toBeInstanceOf(X.NotAuthorized);
    expect(g).toMatchObject({ pid: 'p1', nodeId: 'urn:node:GMN', description: 'Denied' });
    const noDetail = X.exceptionFromXml('<error name="InvalidToken" errorCode="401"/>');
    expect(noDetail).toBeInstanceOf(X.InvalidToken);
    expect(noDetail.detailCode).toBe('0');
  });

  it('a non-standard errorCode is kept, the standard one is the default', () => {
    expect(X.exceptionFromXml('<error name="NotFound" errorCode="410" detailCode="0"/>').errorCode).toBe(410);
    expect(X.exceptionFromXml('<error name="NotFound" errorCode="404" detailCode="0"/>').errorCode).toBe(404);
  });

  it('a body that is not an error document is a DecodeError', () => {
    expect(() => X.exceptionFromXml('<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">x</d1:identifier>')).toThrow(DecodeError);
    expect(() => X.exceptionFromXml('{"error":"x"}')).toThrow(DecodeError);
  });
});

describe('HEAD headers', () => {
  const roundTrip = (e: X.DataONEException): X.DataONEException => {
    const h = e.toHeaders();
    // Everything must be a legal HTTP header value: fetch's Headers throws otherwise.
    const headers = new Headers(h);
    for (const v of Object.values(h)) {
      expect(v).toMatch(/^[\x20-\x7e]*$/);
      expect(v).toBe(v.trim());
    }
    return X.exceptionFromHeaders(headers, e.errorCode)!;
  };

  it.each(NAMES)('%s round trips through headers', (name) => {
    const e = new CLASSES[name](FULL);
    const back = roundTrip(e);
    expect(back).toBeInstanceOf(CLASSES[name]);
    expect(back.fields()).toEqual(e.fields());
  });

  it('sends both pid headers and the documented names', () => {
    const h = new X.NotFound({ description: 'gone', pid: 'a%2Fb', detailCode: '1380', nodeId: 'urn:node:A', traceInformation: 't' }).toHeaders();
    expect(h).toEqual({
      'DataONE-Exception-Name': 'NotFound',
      'DataONE-Exception-DetailCode': '1380',
      'DataONE-Exception-Description': 'gone',
      'DataONE-Exception-TraceInformation': 't',
      'DataONE-Exception-NodeId': 'urn:node:A',
      'DataONE-Exception-PID': 'a%2Fb',
      'DataONE-Exception-Identifier': 'a%2Fb',
    });
  });

  it.each([
    ['unicode', 'café 中文 𝔘'],
    ['newlines', 'line 1\nline 2\r\nline 3'],
    ['percent signs', '100% done, %2F stays, %E9 too'],
    ['surrounding spaces', '  padded  '],
    ['looks encoded', "UTF-8''abc"],
    ['empty', ''],
    ['latin-1', 'Ærøskøbing'],
  ])('description with %s survives exactly', (_l, description) => {
    const back = roundTrip(new X.InvalidRequest({ description, pid: description || 'p' }));
    expect(back.description).toBe(description);
    expect(back.pid).toBe(description || 'p');
  });

  it('reads header names case-insensitively, from a plain object, and the Python pid header', () => {
    const e = X.exceptionFromHeaders({ 'dataone-exception-name': 'NotAuthorized', 'dataone-exception-detailcode': '1040', 'dataone-exception-identifier': 'p1', 'dataone-exception-description': 'no' }, 401)!;
    expect(e).toBeInstanceOf(X.NotAuthorized);
    expect(e).toMatchObject({ detailCode: '1040', pid: 'p1', description: 'no', errorCode: 401 });
  });

  it('no exception headers: undefined', () => {
    expect(X.exceptionFromHeaders({ 'content-type': 'text/xml' })).toBeUndefined();
    expect(X.exceptionFromHeaders(new Headers())).toBeUndefined();
  });

  it('a status that differs from the standard errorCode is kept', () => {
    expect(X.exceptionFromHeaders({ 'DataONE-Exception-Name': 'NotFound' }, 410)!.errorCode).toBe(410);
  });
});

describe('detail codes', () => {
  it('documented examples', () => {
    expect(X.detailCodeFor('MNRead.get', 'NotFound')).toBe('1020');
    expect(X.detailCodeFor('MNStorage.create', 'IdentifierNotUnique')).toBe('1120');
    expect(X.detailCodeFor('MNRead.get', 'VersionMismatch')).toBeUndefined();
    expect(X.detailCodeFor('MNNope.get', 'NotFound')).toBeUndefined();
    expect(X.documentedExceptions('MNRead.get')).toContain('NotFound');
    expect(X.documentedExceptions('MNNope.get')).toEqual([]);
  });

  const rows = readFileSync(join(SPEC_DIR, 'detail-codes.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((c) => c[0]!.startsWith('MN'));

  it('the table has the MN rows', () => {
    expect(rows.length).toBeGreaterThan(100);
  });

  it('every MN row of spec/detail-codes.tsv is reachable through detailCodeFor', () => {
    const missing = rows.filter(([api, op, , , exc, , code]) => !X.isExceptionName(exc!) || X.detailCodeFor(`${api}.${op}`, exc as X.ExceptionName) !== code);
    expect(missing.map((r) => r.join(' | '))).toEqual([]);
  });

  it('every MN row names an exception whose errorCode agrees with EXCEPTION_ERROR_CODES', () => {
    const bad = rows.filter(([, , , , exc, status]) => X.EXCEPTION_ERROR_CODES[exc as X.ExceptionName] !== Number(status));
    expect(bad.map((r) => r.join(' | '))).toEqual([]);
  });

  it('every operation in the generated data is documented by the table', () => {
    const ops = new Set(readFileSync(join(SPEC_DIR, 'detail-codes.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t').slice(0, 2).join('.')));
    expect(Object.keys(DETAIL_CODES).filter((k) => !ops.has(k))).toEqual([]);
  });
});
