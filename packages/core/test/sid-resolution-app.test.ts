// SID resolution through the app, in process (app.request, no socket). v2: "Where an
// operation accepts a SID, it acts on the head PID, which is the latest object in the
// obsolescence chain"; v1 has no SIDs, so a SID is NotFound there (with the operation's
// detail code from spec/detail-codes.tsv). The node is real: SQL catalogue on SQLite,
// managed files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childText, expectDocument, expectIdentifierDocument, expectStatus, TYPES_V2 } from '@memberkit/testkit';
import { expectSpecError, startInProcessNode, type InProcessNode } from './helpers/in-process-node.js';

let n: InProcessNode;
let seq = 0;
const id = (label: string) => `sid-${label}-${++seq}`;
const enc = encodeURIComponent;

beforeAll(async () => {
  n = await startInProcessNode();
});
afterAll(async () => {
  await n?.close();
});

interface Series { sid: string; pids: string[]; bytes: string[] }

/** A v2 series of `length` objects, each obsoleting the one before; the last is the head. */
async function series(label: string, length = 2): Promise<Series> {
  const sid = id(`${label}-sid`);
  const s: Series = { sid, pids: [], bytes: [] };
  for (let i = 0; i < length; i++) {
    const pid = id(`${label}-v${i + 1}`);
    const bytes = `${label} version ${i + 1}\n`;
    const res = i === 0 ? await n.create('v2', pid, { seriesId: sid, bytes }) : await n.update('v2', s.pids[i - 1]!, pid, { seriesId: sid, bytes });
    expectIdentifierDocument(res, pid);
    s.pids.push(pid);
    s.bytes.push(bytes);
  }
  return s;
}

/** What get, describe and getSystemMetadata by `sid` answer on v2: the object `pid` with `bytes`. */
async function expectResolvesTo(sid: string, pid: string, bytes: string): Promise<void> {
  const got = await n.call('GET', `/v2/object/${enc(sid)}`);
  expectStatus(got, 200);
  expect(got.text, `get by SID returns the bytes of ${pid}`).toBe(bytes);
  const described = await n.call('HEAD', `/v2/object/${enc(sid)}`);
  expectStatus(described, 200);
  expect(described.headers.get('content-length')).toBe(String(Buffer.byteLength(bytes)));
  const meta = expectDocument(await n.call('GET', `/v2/meta/${enc(sid)}`), 'systemMetadata', TYPES_V2);
  expect(childText(meta.root, 'identifier'), 'getSystemMetadata by SID is the head').toBe(pid);
}

describe('v2 get, describe, getSystemMetadata: a SID resolves to the head PID', () => {
  it('the head is the last object of the obsolescence chain, and moves with each update', async () => {
    const s = await series('head', 2);
    await expectResolvesTo(s.sid, s.pids[1]!, s.bytes[1]!);
    const third = id('head-v3');
    expectIdentifierDocument(await n.update('v2', s.pids[1]!, third, { seriesId: s.sid, bytes: 'third\n' }), third);
    await expectResolvesTo(s.sid, third, 'third\n');
    // a PID still names its own object, head or not
    expect((await n.call('GET', `/v2/object/${enc(s.pids[0]!)}`)).text).toBe(s.bytes[0]);
  });

  it('an unknown identifier is NotFound with each operation\'s detail code', async () => {
    const missing = id('missing');
    expectSpecError(await n.call('GET', `/v2/object/${enc(missing)}`), 'MNRead.get', 'NotFound');
    expectSpecError(await n.call('HEAD', `/v2/object/${enc(missing)}`), 'MNRead.describe', 'NotFound', missing);
    expectSpecError(await n.call('GET', `/v2/meta/${enc(missing)}`), 'MNRead.getSystemMetadata', 'NotFound');
  });
});

describe('v1 takes no SID: get, describe, getSystemMetadata, archive and delete answer NotFound', () => {
  it('read operations by SID -> NotFound (1020, 1380, 1060) saying it is a series id', async () => {
    const s = await series('v1-read');
    const got = await n.call('GET', `/v1/object/${enc(s.sid)}`);
    expectSpecError(got, 'MNRead.get', 'NotFound');
    expect(childText(got.doc?.root, 'description') ?? '').toMatch(/series/i);
    expectSpecError(await n.call('HEAD', `/v1/object/${enc(s.sid)}`), 'MNRead.describe', 'NotFound', s.sid);
    expectSpecError(await n.call('GET', `/v1/meta/${enc(s.sid)}`), 'MNRead.getSystemMetadata', 'NotFound');
    // the same objects by PID are there on v1
    expect((await n.call('GET', `/v1/object/${enc(s.pids[1]!)}`)).text).toBe(s.bytes[1]);
  });

  it('archive and delete by SID -> NotFound (2911, 2901); nothing archived or deleted', async () => {
    const s = await series('v1-write');
    expectSpecError(await n.call('PUT', `/v1/archive/${enc(s.sid)}`, { as: 'writer' }), 'MNStorage.archive', 'NotFound');
    expectSpecError(await n.call('DELETE', `/v1/object/${enc(s.sid)}`, { as: 'admin' }), 'MNStorage.delete', 'NotFound');
    for (const pid of s.pids) expect((await n.meta('v2', pid)).archived ?? false, pid).toBe(false);
    await expectResolvesTo(s.sid, s.pids[1]!, s.bytes[1]!);
  });
});

describe('v2 archive and delete by SID act on the head', () => {
  it('archive by SID archives the head only; the SID still resolves to the archived head', async () => {
    const s = await series('arch', 3);
    const [first, second, head] = s.pids as [string, string, string];
    const before = await n.meta('v2', head);
    expectIdentifierDocument(await n.call('PUT', `/v2/archive/${enc(s.sid)}`, { as: 'writer' }), head);
    const after = await n.meta('v2', head);
    expect(after.archived).toBe(true);
    expect(after.serialVersion).toBe(before.serialVersion! + 1);
    expect((await n.meta('v2', first)).archived ?? false).toBe(false);
    expect((await n.meta('v2', second)).archived ?? false).toBe(false);
    await expectResolvesTo(s.sid, head, s.bytes[2]!);
    // the head is archived: archiving the series again is refused, and it cannot be updated
    expectStatus(await n.call('PUT', `/v2/archive/${enc(s.sid)}`, { as: 'writer' }), 400);
    expectSpecError(await n.update('v2', head, id('arch-next'), { seriesId: s.sid }), 'MNStorage.update', 'InvalidRequest');
  });

  it('delete by SID deletes the head; the SID then resolves to the new end of the chain', async () => {
    const s = await series('del', 3);
    const [, second, head] = s.pids as [string, string, string];
    expectSpecError(await n.call('DELETE', `/v2/object/${enc(s.sid)}`, { as: 'writer' }), 'MNStorage.delete', 'NotAuthorized');
    expectIdentifierDocument(await n.call('DELETE', `/v2/object/${enc(s.sid)}`, { as: 'admin' }), head);
    expectSpecError(await n.call('GET', `/v2/meta/${enc(head)}`, { as: 'admin' }), 'MNRead.getSystemMetadata', 'NotFound');
    // `second` is obsoleted by an object no longer in the series: it is the chain's end now
    await expectResolvesTo(s.sid, second, s.bytes[1]!);
  });

  it('update and updateSystemMetadata take a PID, not a SID', async () => {
    const s = await series('pid-only');
    expectSpecError(await n.update('v2', s.sid, id('pid-only-next'), { obsoletes: s.sid }), 'MNStorage.update', 'NotFound');
    const head = await n.meta('v2', s.pids[1]!);
    const res = await n.updateSystemMetadata(s.sid, { ...head, identifier: s.sid });
    expect(res.status, res.label).toBe(404);
    expect((await n.meta('v2', s.pids[1]!)).serialVersion).toBe(head.serialVersion);
  });
});
