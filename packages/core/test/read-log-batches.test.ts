// Read events are written behind (EventService.recordBehind): concurrent gets share a few
// commits instead of one each, getLogRecords still sees every read that was answered, and
// closing the node commits the reads still waiting. A real node over SQLite and managed files;
// the event log is the SQLite one, observed through a wrapper that counts its appends.
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, silentLogger, type MemberNode } from '@memberkit/core';
import { buildUploadSysmeta, createParts, encodeSysmeta, multipartBody } from '@memberkit/testkit';
import type { EventLogStore } from '@memberkit/types';

const BYTES = Buffer.from('bytes read many times\n');
let dir: string;
let keys: ReturnType<typeof generateTokenKeyPair>;
let admin: string;

async function startNode(appends: { count: number; entries: number }): Promise<MemberNode> {
  const sql = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'catalogue.sqlite') });
  const log = sql.eventLog;
  const counted: EventLogStore = {
    open: () => log.open?.() ?? Promise.resolve(),
    close: () => log.close?.() ?? Promise.resolve(),
    query: (q) => log.query(q),
    append: (events) => {
      appends.count++;
      appends.entries += events.length;
      return log.append(events);
    },
  };
  return createMemberNode({
    node: {
      identifier: 'urn:node:READLOG', name: 'read log', description: 'read events written behind', baseURL: 'http://127.0.0.1/mn',
      subject: 'CN=urn:node:READLOG,DC=dataone,DC=org', contactSubject: ['CN=admin'], replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
    },
    access: { administrators: ['CN=admin'], cnSubjects: [], createPolicy: 'authenticated' },
    auth: { jwt: { keys: [keys.publicKeyPem] } },
    basePath: '/mn',
  }, { storage: createFilesystemStorage({ root: join(dir, 'objects') }), metadata: sql.catalogue, eventLog: counted }, { logger: silentLogger });
}

async function readCount(node: MemberNode): Promise<number> {
  const res = await node.app.request('/mn/v2/log?event=read&count=0', { headers: { Authorization: admin } });
  expect(res.status).toBe(200);
  return Number(/total="(\d+)"/.exec(await res.text())?.[1]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memberkit-read-log-'));
  keys = generateTokenKeyPair();
  admin = `Bearer ${await mintToken(keys.privateKeyPem, { subject: 'CN=admin' })}`;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('read events written behind', () => {
  it('200 gets in a row share a few commits; getLogRecords sees all; close commits the rest', async () => {
    const appends = { count: 0, entries: 0 };
    const node = await startNode(appends);
    const sm = buildUploadSysmeta({ pid: 'often-read', bytes: BYTES, rightsHolder: 'CN=admin', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } });
    const body = multipartBody(createParts('often-read', BYTES, encodeSysmeta(sm, 'v2')));
    const created = await node.app.request('/mn/v2/object', { method: 'POST', headers: { Authorization: admin, 'Content-Type': body.contentType }, body: body.body });
    expect(created.status, await created.clone().text()).toBe(200);
    const before = { ...appends };

    // One get after another, as a client on one connection sends them: each answered in
    // turn, their log entries share commits (a get waited for its own commit before).
    for (let i = 0; i < 200; i++) {
      const res = await node.app.request('/mn/v2/object/often-read');
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(BYTES.toString());
    }
    // Every answered read is in the log when it is asked for, right away.
    expect(await readCount(node)).toBe(200);
    expect(appends.entries - before.entries).toBe(200);
    expect(appends.count - before.count, 'commits for 200 reads').toBeLessThanOrEqual(40);

    // Reads still waiting when the node closes are committed by close().
    for (let i = 0; i < 30; i++) expect((await node.app.request('/mn/v2/object/often-read')).status).toBe(200);
    await node.close();
    const reopened = await startNode({ count: 0, entries: 0 });
    try {
      expect(await readCount(reopened)).toBe(230);
    } finally {
      await reopened.close();
    }
  });
});
