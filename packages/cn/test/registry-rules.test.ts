import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE } from '@memberkit/core';
import type { Node, Schedule } from '@memberkit/types';
import { isLocalBaseUrl, nodeDocumentProblem, nodeIdentifierProblem, normaliseBaseUrl, scheduleProblem } from '../src/registry/registration-rules.js';

// The checks CNRegister applies to a submitted Node document (registration-rules.ts); the
// HTTP behaviour around them is in registry.test.ts.

const node = (over: Partial<Node> = {}): Node => ({
  replicate: false, synchronize: true, type: 'mn', state: 'up', identifier: 'urn:node:RULES', name: 'n', description: 'd',
  baseURL: 'https://data.example.org/mn', subject: ['CN=urn:node:RULES,DC=dataone,DC=org'], contactSubject: ['CN=Jane,O=Example'], property: [],
  synchronization: { schedule: DEFAULT_SCHEDULE }, services: { service: [] }, ...over,
});
const schedule = (over: Partial<Schedule>): Schedule => ({ ...DEFAULT_SCHEDULE, ...over });

describe('registration rules', () => {
  it('node identifiers: ^urn:node:\\w{2,16}$', () => {
    for (const ok of ['urn:node:AB', 'urn:node:MY_REPO_2', 'urn:node:ABCDEFGHIJKLMNOP']) expect(nodeIdentifierProblem(ok)).toBeUndefined();
    for (const bad of ['urn:node:A', 'urn:node:ABCDEFGHIJKLMNOPQ', 'urn:node:my-repo', 'urn:node:../x', 'node:AB', 'urn:node:AB ', ' urn:node:AB', 'urn:node:ÄB']) {
      expect(nodeIdentifierProblem(bad), bad).toMatch(/does not match/);
    }
  });

  it('baseURLs compare in one form: scheme and host lower case, default port and trailing slashes dropped', () => {
    expect(normaliseBaseUrl('HTTPS://Data.Example.ORG:443/mn/')).toBe('https://data.example.org/mn');
    expect(normaliseBaseUrl('https://data.example.org/mn//')).toBe('https://data.example.org/mn');
    expect(normaliseBaseUrl('http://data.example.org:8080/mn')).toBe('http://data.example.org:8080/mn');
    expect(normaliseBaseUrl('https://data.example.org/MN')).toBe('https://data.example.org/MN');
    for (const bad of ['ftp://x.org/mn', 'not a url', 'https://user:pw@x.org/mn', 'https://x.org/mn?x=1', 'https://x.org/mn#f']) expect(normaliseBaseUrl(bad), bad).toBeUndefined();
  });

  it('loopback, private, link-local and unspecified addresses are local; public names and addresses are not', () => {
    for (const local of ['http://localhost:8080/mn', 'http://LOCALHOST/mn', 'http://mn.localhost/mn', 'http://127.0.0.1/mn', 'http://127.8.9.1/mn', 'http://[::1]:8080/mn',
      'http://10.1.2.3/mn', 'http://172.16.0.1/mn', 'http://172.31.255.255/mn', 'http://192.168.1.1/mn', 'http://169.254.1.1/mn', 'http://0.0.0.0/mn',
      'http://[fd00::1]/mn', 'http://[fe80::1]/mn', 'http://[::ffff:127.0.0.1]/mn', 'http://[::]/mn']) {
      expect(isLocalBaseUrl(local), local).toBe(true);
    }
    for (const remote of ['https://data.example.org/mn', 'http://172.32.0.1/mn', 'http://8.8.8.8/mn', 'http://[2001:db8::1]/mn', 'https://localhost.example.org/mn']) {
      expect(isLocalBaseUrl(remote), remote).toBe(false);
    }
  });

  it('schedules follow Quartz: each field within its bounds, seconds a single number, exactly one of mday and wday "?"', () => {
    const ok: Array<Partial<Schedule>> = [
      {},
      { sec: '0', min: '*/5', hour: '1-5', mday: '?', wday: 'MON-FRI' },
      { min: '0,15,30,45', hour: '*', mday: 'L', wday: '?' },
      { mday: '15W', wday: '?' },
      { mday: '?', wday: '6#3' },
      { mday: '?', wday: 'FRIL', mon: 'JAN-MAR' },
      { year: '2025-2030' },
    ];
    for (const s of ok) expect(scheduleProblem(schedule(s)), JSON.stringify(s)).toBeUndefined();
    const bad: Array<[Partial<Schedule>, RegExp]> = [
      [{ sec: '*' }, /sec/],
      [{ sec: '0/10' }, /sec/],
      [{ min: '60' }, /min="60"/],
      [{ hour: '24' }, /hour/],
      [{ mday: '32' }, /mday/],
      [{ mon: '13' }, /mon/],
      [{ mon: 'FOO' }, /mon/],
      [{ wday: '8', mday: '?' }, /wday/],
      [{ min: '*/0' }, /min/],
      [{ min: '1-' }, /min/],
      [{ min: '' }, /min/],
      [{ year: '1900' }, /year/],
      [{ mday: '*', wday: '*' }, /exactly one of mday and wday/],
      [{ mday: '?', wday: '?' }, /exactly one of mday and wday/],
    ];
    for (const [s, re] of bad) expect(scheduleProblem(schedule(s)), JSON.stringify(s)).toMatch(re);
    expect(scheduleProblem(undefined)).toMatch(/needs a synchronization schedule/);
  });

  it('a document: identifier, baseURL, loopback unless allowed, subjects, the schedule only when synchronize is on', () => {
    const strict = { allowLoopback: false };
    expect(nodeDocumentProblem(node(), strict)).toBeUndefined();
    expect(nodeDocumentProblem(node({ identifier: 'urn:node:x' }), strict)).toMatch(/identifier/);
    expect(nodeDocumentProblem(node({ baseURL: 'mn.example.org' }), strict)).toMatch(/baseURL/);
    expect(nodeDocumentProblem(node({ baseURL: 'http://127.0.0.1:8080/mn' }), strict)).toMatch(/allowLoopback/);
    expect(nodeDocumentProblem(node({ baseURL: 'http://127.0.0.1:8080/mn' }), { allowLoopback: true })).toBeUndefined();
    expect(nodeDocumentProblem(node({ subject: [] }), strict)).toMatch(/no subject/);
    expect(nodeDocumentProblem(node({ contactSubject: [] }), strict)).toMatch(/no contact subject/);
    const { synchronization: _s, ...unscheduled } = node();
    expect(nodeDocumentProblem({ ...unscheduled, synchronize: true }, strict)).toMatch(/schedule/);
    expect(nodeDocumentProblem({ ...unscheduled, synchronize: false }, strict)).toBeUndefined();
    expect(nodeDocumentProblem(node({ synchronize: false, synchronization: { schedule: schedule({ sec: '*' }) } }), strict)).toBeUndefined();
  });
});
