// The SQLite change mark behind every cached read (`knownChangeHead`): a head known from memory
// must never be older than a commit another process made before the request arrived. A
// `PRAGMA data_version` kept for a whole turn of the event loop broke that: read by a catch-up
// run at a check phase (the query index catches up there after a local commit), it answered for
// the next turn's requests, so a commit in between went unseen and the request was answered
// from an out-of-date cache.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildObjectRecord } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mk-change-mark-'));
const file = join(dir, 'catalogue.db');
let sql: SqlCatalogue;

beforeAll(async () => {
  sql = createSqlCatalogue({ dialect: 'sqlite', connection: file });
  await sql.open();
  await sql.catalogue.apply({ insert: [buildObjectRecord('mark-1')] });
});
afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a head read at the check phase does not answer for the next turn's requests after another process's commit", async () => {
  const catalogue = sql.catalogue;
  // A request arriving on a socket: its handler (a poll-phase callback) asks whether the head
  // is known from memory, as the record cache does before answering from memory.
  const answers: Array<number | undefined> = [];
  const server = createServer((socket) => socket.on('data', () => answers.push(catalogue.knownChangeHead!())));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  try {
    // At a check phase: the head is read (as a catch-up run does), then another process commits
    // and a client, having seen that commit, sends its request at once.
    const head = await new Promise<number>((resolve, reject) => {
      setImmediate(() => {
        catalogue.changeHead!().then((h) => {
          const other = new Database(file);
          other.prepare('UPDATE mk_clock SET last_ms = last_ms + 1 WHERE id = 1').run();
          other.close();
          client.write('x');
          resolve(h);
        }, reject);
      });
    });
    while (answers.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(head).toBeGreaterThan(0);
    // The mark has moved since the head was read: not known from memory.
    expect(answers).toEqual([undefined]);
  } finally {
    client.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
