// `memberkit serve DIR --workers 2` (issue #21 item 5), started as the README says, over real
// HTTP, on one SQLite data folder and on one PostgreSQL catalogue (a schema per group, and a
// PostgreSQL query index shared by the workers): both workers serve; a create on one is
// readable on the other at once; an object made private is refused by every worker at once
// (get, query, views); background work runs once (the sweep, federation jobs, a wrap rescan,
// query indexing); kill -9 of a worker: the primary starts it again and no request fails;
// SIGTERM stops everything with exit code 0. A worker that cannot start stops the primary with
// one line. Which worker answered is read from the logs: every JSON line names its process
// (`pid`), and a request line its caller (`subject`), so a keep-alive connection per subject
// pins a client to one worker.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { looksLikeXml, rootElementName, startCoordinatingNodeStub, XmlBodyCollector, type CoordinatingNodeStub } from '@memberkit/testkit';
import { LogCodec, ObjectListCodec, SystemMetadataCodec } from '@memberkit/types';
import { parseConfig } from '../packages/cli/src/load-config.js';
import { workerCount } from '../packages/cli/src/cluster-size.js';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';
import { createForm } from './support/sysmeta.js';

const ROOT = join(import.meta.dirname, '..');
const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const CN_SUBJECT = 'CN=urn:node:CNSTUB,DC=dataone,DC=org';
/** Subjects pinned to one worker each: administrators, and strangers (authenticated, no rights on private objects). */
const ADMINS = Array.from({ length: 16 }, (_, i) => `CN=admin-${i}`);
const SWEEP = { graceSeconds: 4, intervalSeconds: 1 };
const WORKERS = 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = encodeURIComponent;
const xml = new XmlBodyCollector();
afterEach(async () => {
  await xml.flush();
});

// ---------------------------------------------------------------------------------------------
// HTTP: one request per fresh connection (node:cluster hands each connection to a worker), or
// on a client's own keep-alive connection.

interface Reply {
  status: number;
  body: string;
}

async function call(url: string, init: { method?: string; agent?: Agent; token?: string; form?: FormData } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  if (init.form) {
    const r = new Response(init.form);
    body = Buffer.from(await r.arrayBuffer());
    headers['content-type'] = r.headers.get('content-type')!;
    headers['content-length'] = String(body.length);
  }
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const method = init.method ?? 'GET';
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: init.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const type = res.headers['content-type'] ?? '';
        // Every DataONE document received is validated (solr answers and pages are not DataONE's).
        if (/xml/.test(type) && looksLikeXml(text, type) && !['response', 'html'].includes(rootElementName(text) ?? '')) xml.add(`${method} ${url} -> ${res.statusCode}`, text);
        resolve({ status: res.statusCode!, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A client on its own keep-alive connection, so on one worker (`pid`, read from the logs). */
interface Pinned {
  subject: string;
  token: string;
  agent: Agent;
  pid: number;
}

// ---------------------------------------------------------------------------------------------
// Logs: pino JSON lines on stdout, each with the process id.

interface LogLine {
  pid: number;
  time: number;
  msg?: string;
  [key: string]: unknown;
}

function logLines(node: NodeProcess, since = 0): LogLine[] {
  const out: LogLine[] = [];
  for (const line of node.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const l = JSON.parse(line) as LogLine;
      if (typeof l.pid === 'number' && l.time >= since) out.push(l);
    } catch {
      // A line still being written.
    }
  }
  return out;
}

/** The worker process of each slot now (its latest 'worker ready' line). */
function workerPids(node: NodeProcess): number[] {
  const pids: number[] = [];
  for (const l of logLines(node)) if (l.msg === 'worker ready') pids[l.slot as number] = l.pid;
  return pids;
}

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Clients named `${prefix}-0`, `-1`... each on its own connection, until every worker has
 * one: the worker of each is the process that logged its first request.
 */
async function pinPerWorker(node: NodeProcess, prefix: string): Promise<Map<number, Pinned>> {
  const pids = new Set(workerPids(node));
  const byWorker = new Map<number, Pinned>();
  for (let i = 0; i < 16 && byWorker.size < pids.size; i++) {
    const subject = `CN=${prefix}-${i}`;
    const token = await testToken(subject);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await call(`${node.baseUrl}/v2/object?count=0`, { agent, token })).status).toBe(200);
    const pid = await waitFor(() => logLines(node).find((l) => l.msg === 'request' && l.subject === subject)?.pid, 10_000, `the request line of ${subject}`);
    if (byWorker.has(pid)) agent.destroy();
    else byWorker.set(pid, { subject, token, agent, pid });
  }
  expect([...byWorker.keys()].sort(), 'a client pinned to every worker').toEqual([...pids].sort());
  return byWorker;
}

// ---------------------------------------------------------------------------------------------
// Operations.

async function createObject(node: NodeProcess, by: Pinned, pid: string, bytes = Buffer.from(`bytes of ${pid}`)): Promise<void> {
  const res = await call(`${node.baseUrl}/v2/object`, { method: 'POST', agent: by.agent, token: by.token, form: createForm(pid, bytes) });
  expect(res.status, `create ${pid}: ${res.body}`).toBe(200);
}

async function makePrivate(node: NodeProcess, by: Pinned, pid: string): Promise<void> {
  const meta = await call(`${node.baseUrl}/v2/meta/${enc(pid)}`, { agent: by.agent, token: by.token });
  expect(meta.status).toBe(200);
  const sm = SystemMetadataCodec.decode(meta.body);
  const form = new FormData();
  form.append('pid', pid);
  form.append('sysmeta', new Blob([SystemMetadataCodec.encode({ ...sm, accessPolicy: { allow: [{ subject: ['CN=owner'], permission: ['read'] }] } }, 'v2')], { type: 'text/xml' }), 'sysmeta.xml');
  const res = await call(`${node.baseUrl}/v2/meta`, { method: 'PUT', agent: by.agent, token: by.token, form });
  expect(res.status, res.body).toBe(200);
}

/** numFound of a solr answer (XML or JSON). */
function numFound(body: string): number {
  return Number(/numFound="(\d+)"|"numFound":\s*(\d+)/.exec(body)?.slice(1).find(Boolean) ?? -1);
}

/** What `by` gets for `pid` on its worker: get, query, views. */
async function seenBy(node: NodeProcess, by: Pinned, pid: string): Promise<{ get: number; query: boolean; views: number }> {
  const get = await call(`${node.baseUrl}/v2/object/${enc(pid)}`, { agent: by.agent, token: by.token });
  const query = await call(`${node.baseUrl}/v2/query/solr/?q=${enc(`id:"${pid}"`)}&fl=id`, { agent: by.agent, token: by.token });
  expect(query.status, query.body).toBe(200);
  const views = await call(`${node.baseUrl}/v2/views/default/${enc(pid)}`, { agent: by.agent, token: by.token });
  return { get: get.status, query: numFound(query.body) > 0, views: views.status };
}

// ---------------------------------------------------------------------------------------------
// Catalogues shared by the workers of a group.

interface SharedCatalogue {
  section: Record<string, unknown>;
  /** A write intent as the core records it before committing bytes (the state a kill between byte and catalogue commit leaves). */
  intend(name: string): Promise<void>;
  drop(): Promise<void>;
}

async function postgresSchema(prefix: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await c.end();
    },
  };
}

async function postgresCatalogue(): Promise<SharedCatalogue> {
  const schema = await postgresSchema('mk_workers');
  return {
    section: { type: 'sql', dialect: 'postgres', connection: schema.url, poolSize: 4 },
    async intend(name) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`INSERT INTO ${schema.name}.mk_intents (id, name, created) VALUES ($1, $2, $3)`, [randomUUID(), name, Date.now()]);
      await c.end();
    },
    drop: () => schema.drop(),
  };
}

function sqliteCatalogue(dir: string): SharedCatalogue {
  return {
    section: { type: 'sqlite', file: 'memberkit.db' },
    intend: async (name) => {
      const db = new Database(join(dir, 'memberkit.db'), { timeout: 5_000 });
      try {
        db.prepare('INSERT INTO mk_intents (id, name, created) VALUES (?, ?, ?)').run(randomUUID(), name, Date.now());
      } finally {
        db.close();
      }
    },
    drop: async () => undefined,
  };
}

/** A webhook receiving synchronization failure reports (the federation job's side effect). */
async function startWebhook(): Promise<{ url: string; received: string[]; server: Server }> {
  const received: string[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push((JSON.parse(body) as { pid: string }).pid);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server };
}

let cn: CoordinatingNodeStub;
beforeAll(async () => {
  cn = await startCoordinatingNodeStub({ nodeId: 'urn:node:CNSTUB', subject: CN_SUBJECT });
});
afterAll(async () => {
  await cn?.stop();
});

const VARIANTS = [
  { name: 'one SQLite data folder', postgres: false },
  { name: 'one PostgreSQL catalogue', postgres: true },
];

describe.each(VARIANTS)('memberkit serve --workers 2 on $name', ({ postgres }) => {
  let work: string;
  let managed: NodeProcess;
  let wrapped: NodeProcess;
  let managedDir: string;
  let catalogue: SharedCatalogue;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;
  const cleanups: Array<() => Promise<void>> = [];
  const treeRoot = () => join(work, 'archive');
  const wrappedFiles = Array.from({ length: 12 }, (_, i) => `site-${i % 3}/obs-${i}.csv`);
  let admins: Map<number, Pinned>;
  let strangers: Map<number, Pinned>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-workers-'));
    managedDir = join(work, 'managed');
    const wrapDir = join(work, 'wrapped');
    mkdirSync(managedDir, { recursive: true });
    mkdirSync(wrapDir, { recursive: true });
    for (const f of wrappedFiles) {
      mkdirSync(join(treeRoot(), f, '..'), { recursive: true });
      writeFileSync(join(treeRoot(), f), `site,value\n${f},1\n`);
    }
    catalogue = postgres ? await postgresCatalogue() : sqliteCatalogue(managedDir);
    const wrapCatalogue = postgres ? await postgresCatalogue() : sqliteCatalogue(wrapDir);
    cleanups.push(() => catalogue.drop(), () => wrapCatalogue.drop());
    // On PostgreSQL the workers also share a PostgreSQL query index (one indexes, both read).
    let query: Record<string, unknown> = { enabled: true };
    if (postgres) {
      const schema = await postgresSchema('mk_workers_q');
      cleanups.push(() => schema.drop());
      query = { enabled: true, index: 'postgres', url: PG_URL, schema: schema.name };
    }
    webhook = await startWebhook();
    writeConfig(managedDir, {
      storage: { type: 'filesystem', root: 'objects' },
      catalogue: catalogue.section,
      access: { administrators: ADMINS, cnSubjects: [CN_SUBJECT] },
      sweep: SWEEP,
      log: { level: 'info' },
      extensions: { views: true, packages: false, query },
      federation: { cnBaseUrl: cn.baseUrl, checkReservations: false, syncFailureWebhook: webhook.url, replication: { retryDelayMs: 200 } },
      metrics: { enabled: true, port: 0 },
    });
    // Debug: a rescan that finds the lease held would say so.
    writeConfig(wrapDir, {
      storage: { type: 'tree', root: treeRoot() },
      catalogue: wrapCatalogue.section,
      wrap: { rightsHolder: 'CN=archive owner', rescanIntervalSeconds: 1 },
      log: { level: 'debug' },
      extensions: { views: false, packages: false, query: { enabled: true } },
    });
    // One group at a time: six processes starting at once on two cores only queue.
    managed = await startNodeProcess(managedDir, [], undefined, { workers: WORKERS });
    wrapped = await startNodeProcess(wrapDir, [], undefined, { workers: WORKERS });
    admins = await pinPerWorker(managed, 'admin');
    strangers = await pinPerWorker(managed, 'stranger');
  }, 240_000);

  afterAll(async () => {
    for (const c of [...(admins?.values() ?? []), ...(strangers?.values() ?? [])]) c.agent.destroy();
    await Promise.all([managed?.stop(), wrapped?.stop()]);
    await new Promise((r) => webhook?.server.close(r));
    for (const c of cleanups) await c().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  });

  it('both workers answer requests, on one port', async () => {
    const since = Date.now();
    const pids = workerPids(managed);
    expect(pids.length).toBe(WORKERS);
    for (let i = 0; i < 12; i++) expect((await call(`${managed.baseUrl}/v2/object?count=1`)).status).toBe(200);
    const served = new Set(logLines(managed, since).filter((l) => l.msg === 'request').map((l) => l.pid));
    expect([...served].sort(), 'processes that logged requests').toEqual([...pids].sort());
  }, 30_000);

  it('an object created on one worker is readable on the other at once (get, describe, getSystemMetadata, query)', async () => {
    for (const [creatorPid, creator] of admins) {
      for (const [readerPid, reader] of admins) {
        if (readerPid === creatorPid) continue;
        const pid = `across-${randomBytes(4).toString('hex')}`;
        const bytes = Buffer.from(`created on ${creatorPid}`);
        await createObject(managed, creator, pid, bytes);
        const meta = await call(`${managed.baseUrl}/v2/meta/${enc(pid)}`, { agent: reader.agent, token: reader.token });
        expect(meta.status).toBe(200);
        expect(SystemMetadataCodec.decode(meta.body).identifier).toBe(pid);
        const got = await call(`${managed.baseUrl}/v2/object/${enc(pid)}`, { agent: reader.agent, token: reader.token });
        expect([got.status, got.body]).toEqual([200, bytes.toString()]);
        expect((await call(`${managed.baseUrl}/v2/object/${enc(pid)}`, { method: 'HEAD', agent: reader.agent, token: reader.token })).status).toBe(200);
        const found = await call(`${managed.baseUrl}/v2/query/solr/?q=${enc(`id:"${pid}"`)}&fl=id`, { agent: reader.agent, token: reader.token });
        expect(numFound(found.body), `query on ${readerPid} for an object created on ${creatorPid}`).toBe(1);
      }
    }
  }, 60_000);

  it('an object made private on one worker is refused by every worker at once (get, query, views)', async () => {
    for (const [ownerPid, owner] of admins) {
      const pid = `private-${randomBytes(4).toString('hex')}`;
      await createObject(managed, owner, pid);
      // Every worker serves it publicly first (its caches and the index hold the public version).
      for (const stranger of strangers.values()) expect(await seenBy(managed, stranger, pid)).toEqual({ get: 200, query: true, views: 200 });
      await makePrivate(managed, owner, pid);
      // The owner's worker first: a follower without an indexer sees its own change only through the first worker.
      for (const [strangerPid, stranger] of [...strangers].sort(([a], [b]) => Number(b === ownerPid) - Number(a === ownerPid))) {
        const seen = await seenBy(managed, stranger, pid);
        const where = `on ${strangerPid}, made private on ${ownerPid}`;
        expect(seen.get, `get ${where}`).toBe(401);
        expect(seen.query, `query ${where}`).toBe(false);
        expect([401, 404], `views ${where}`).toContain(seen.views);
      }
    }
  }, 60_000);

  it('the metrics endpoint answers for every worker: requests summed, the catalogue counted once', async () => {
    const port = Number(/metrics:\s+curl http:\/\/[^:]+:(\d+)\/metrics/.exec(managed.output())?.[1]);
    expect(port).toBeGreaterThan(0);
    const admin = admins.values().next().value!;
    const total = ObjectListCodec.decode((await call(`${managed.baseUrl}/v2/object?count=0`, { token: admin.token })).body).total;
    const text = (await call(`http://127.0.0.1:${port}/metrics`)).body;
    expect(Number(/^memberkit_catalogue_objects (\d+)/m.exec(text)?.[1])).toBe(total);
    // The requests of the tests so far were served by both workers; the counter holds them all.
    const answered = [...text.matchAll(/^memberkit_http_requests_total\{operation="MNRead.getSystemMetadata",status="200"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    const logged = logLines(managed).filter((l) => l.msg === 'request' && l.op === 'MNRead.getSystemMetadata' && l.status === 200);
    expect(new Set(logged.map((l) => l.pid)).size).toBe(WORKERS);
    expect(answered).toBe(logged.length);
  }, 30_000);

  it('background work runs once: the sweep of stranded bytes, federation jobs, query indexing', async () => {
    const [leader, follower] = workerPids(managed);
    // Stranded bytes: an intent never settled and bytes no catalogue row references.
    await catalogue.intend('killed-between');
    const stranded = join(managedDir, 'objects', 'objects', 'zz', 'zz', `killed-between-${randomBytes(8).toString('hex')}`);
    mkdirSync(join(stranded, '..'), { recursive: true });
    writeFileSync(stranded, 'committed, never catalogued');
    // Federation jobs: synchronizationFailed reports, sent to both workers, each a job whose run POSTs to the webhook.
    const cnToken = await testToken(CN_SUBJECT);
    const reports = Array.from({ length: 6 }, (_, i) => `sync-${i}-${randomBytes(3).toString('hex')}`);
    for (const pid of reports) {
      const form = new FormData();
      form.append('message', new Blob([`<error name="SynchronizationFailed" errorCode="500" detailCode="0" pid="${pid}"><description>not harvested</description></error>`], { type: 'text/xml' }), 'error.xml');
      const res = await call(`${managed.baseUrl}/v2/error`, { method: 'POST', token: cnToken, form });
      expect(res.status, res.body).toBe(200);
    }
    await waitFor(() => !existsSync(stranded) || undefined, (SWEEP.graceSeconds + 4 * SWEEP.intervalSeconds) * 1000 + 10_000, 'the sweep');
    await waitFor(() => reports.every((p) => webhook.received.includes(p)) || undefined, 30_000, 'every report at the webhook');
    // Time for a second sweep pass or a second run of a job, had either happened.
    await sleep(3 * SWEEP.intervalSeconds * 1000);
    const lines = logLines(managed);
    const sweeps = lines.filter((l) => l.msg === 'sweep: removed bytes whose catalogue commit never happened');
    expect(sweeps.map((l) => l.pid), 'sweep removals (by process)').toEqual([leader]);
    expect(lines.filter((l) => /^sweep/.test(l.msg ?? '') && l.pid !== leader), 'sweep lines of the follower').toEqual([]);
    expect(reports.map((p) => webhook.received.filter((r) => r === p).length), 'webhook calls per report').toEqual(reports.map(() => 1));
    const jobs = lines.filter((l) => l.msg === 'job done');
    expect(jobs.length, 'jobs done').toBe(reports.length);
    expect(new Set(lines.filter((l) => l.msg === 'request' && l.op === 'MNRead.synchronizationFailed').map((l) => l.pid)), 'workers that took reports').toEqual(new Set([leader, follower]));
  }, 60_000);

  it('a wrap rescan runs once, in one worker, and one worker indexes what it finds', async () => {
    const admin = await testToken('CN=admin');
    const listed = async () => new Set(ObjectListCodec.decode((await call(`${wrapped.baseUrl}/v2/object?count=1000`, { token: admin })).body).objectInfo.map((o) => o.identifier));
    await waitFor(async () => (await listed()).size === wrappedFiles.length || undefined, 60_000, 'the first scan');
    const [leader, follower] = workerPids(wrapped);
    const since = Date.now();
    const added = `site-new/added-${randomBytes(3).toString('hex')}.csv`;
    mkdirSync(join(treeRoot(), 'site-new'), { recursive: true });
    writeFileSync(join(treeRoot(), added), 'site,value\nnew,2\n');
    await waitFor(async () => (await listed()).has(added) || undefined, 30_000, 'the rescan that finds the new file');
    // Found at once by a query on every worker (the follower asks the indexing worker first).
    for (let i = 0; i < 6; i++) {
      const found = await call(`${wrapped.baseUrl}/v2/query/solr/?q=${enc(`id:"${added}"`)}&fl=id`);
      expect(numFound(found.body)).toBe(1);
    }
    // Two more rescan intervals: a second scan of the change (by the other worker) would show now.
    await sleep(2_500);
    const lines = logLines(wrapped);
    const scans = lines.filter((l) => /wrap (re)?scan|another scanner holds the lease|another process is scanning/.test(l.msg ?? ''));
    expect(scans.length, 'scan lines').toBeGreaterThan(0);
    expect(new Set(scans.map((l) => l.pid)), 'processes that scanned').toEqual(new Set([leader]));
    expect(scans.filter((l) => /lease|another process/.test(l.msg ?? '')), 'scans that found the lease held').toEqual([]);
    expect(lines.filter((l) => l.time >= since && /: 1 added/.test(l.msg ?? '')).length, 'rescans that catalogued the new file').toBe(1);
    const log = LogCodec.decode((await call(`${wrapped.baseUrl}/v2/log?event=create&idFilter=${enc(added)}&count=100`, { token: admin })).body);
    expect(log.logEntry.filter((e) => e.identifier === added).length, 'create events of the new file').toBe(1);
    // The query index: one process follows the change feed into it, the other reads it.
    expect(lines.filter((l) => l.msg === 'query index: this process follows the change feed into the index').map((l) => l.pid)).toEqual([leader]);
    expect(lines.filter((l) => l.msg === 'query index: read here, kept current by another process').map((l) => l.pid)).toEqual([follower]);
    // Both served the queries.
    expect(new Set(lines.filter((l) => l.time >= since && l.msg === 'request' && l.op === 'MNQuery.query').map((l) => l.pid))).toEqual(new Set([leader, follower]));
  }, 120_000);

  it('kill -9 of a worker: the primary starts it again, and no request after that fails', async () => {
    const public1 = `killed-${randomBytes(4).toString('hex')}`;
    await createObject(managed, admins.values().next().value!, public1);
    // The first worker: it also indexes, so the follower's queries wait for its replacement.
    const [victim] = workerPids(managed);
    const since = Date.now();
    process.kill(victim!, 'SIGKILL');
    await waitFor(() => logLines(managed, since).some((l) => /^worker 0 died/.test(l.msg ?? '')) || undefined, 10_000, "the primary's notice");
    const failures: string[] = [];
    let after = 0;
    for (let round = 0; after < 15; round++) {
      for (const url of [`${managed.baseUrl}/v2/meta/${enc(public1)}`, `${managed.baseUrl}/v2/object/${enc(public1)}`, `${managed.baseUrl}/v2/query/solr/?q=${enc(`id:"${public1}"`)}&fl=id`]) {
        const res = await call(url).catch((err: unknown) => ({ status: 0, body: String(err) }));
        if (res.status !== 200 || (url.includes('/query/') && numFound(res.body) !== 1)) failures.push(`${url}: ${res.status} ${res.body.slice(0, 200)}`);
      }
      if (logLines(managed, since).some((l) => l.msg === 'worker 0 started again')) after++;
      if (round > 600) throw new Error('worker 0 was not started again');
      await sleep(50);
    }
    expect(failures, 'requests that failed after the kill').toEqual([]);
    const [replacement] = workerPids(managed);
    expect(replacement).not.toBe(victim);
    expect(logLines(managed, since).some((l) => l.pid === replacement && l.msg === 'request'), 'the new worker serves').toBe(true);
    // The agents pinned to the dead worker lost their connection.
    for (const c of [...admins.values(), ...strangers.values()]) if (c.pid === victim) c.agent.destroy();
  }, 90_000);

  it('SIGTERM stops every worker and the primary exits with 0', async () => {
    for (const node of [managed, wrapped]) {
      const pids = workerPids(node);
      const exited = new Promise<number | null>((r) => node.child.once('exit', (code) => r(code)));
      await node.stop('SIGTERM');
      expect(await exited).toBe(0);
      for (const pid of pids) expect(() => process.kill(pid, 0), `worker ${pid} still running`).toThrow();
      expect(logLines(node).filter((l) => l.msg === 'shutting down').map((l) => l.pid).sort()).toEqual(expect.arrayContaining([...pids].sort()));
    }
  }, 60_000);
});

describe('memberkit serve --workers: start', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-workers-start-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** `memberkit serve dir --workers 2 ...args` to its end: exit code, the lines on stderr, how long. */
  function serveToEnd(dir: string, args: string[]): Promise<{ code: number | null; stderr: string[]; stdout: string; ms: number }> {
    const started = Date.now();
    const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), 'serve', dir, '--workers', '2', ...args], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    return new Promise((resolve) => {
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr: stderr.split('\n').filter(Boolean), stdout, ms: Date.now() - started });
      });
    });
  }

  it('a worker that cannot listen (port in use) makes the primary exit non-zero with that one line', async () => {
    const busy = createNetServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port;
    try {
      const dir = join(work, 'busy');
      writeConfig(dir, {});
      const r = await serveToEnd(dir, ['--port', String(port), '--host', '127.0.0.1']);
      expect(r.code).toBe(1);
      expect(r.stderr).toEqual([`port ${port} is already in use on 127.0.0.1: choose another with server.port in ${join(dir, 'memberkit.config.json')} or --port`]);
      // No worker was started again: the primary stopped at the first failure.
      expect(r.stdout).not.toMatch(/started again|died/);
    } finally {
      busy.close();
    }
  }, 90_000);

  it('a configuration mistake stops the primary before any worker starts, with one line', async () => {
    const dir = join(work, 'typo');
    writeConfig(dir, { server: { port: 0, host: '127.0.0.1', workrs: 2 } });
    const r = await serveToEnd(dir, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(/server\.workrs.*did you mean server\.workers/);
    expect(r.stdout).not.toMatch(/worker ready/);
  }, 60_000);

  it('"auto": one per core for a database server or a read-only SQLite node, one for a writable SQLite node', () => {
    const count = (raw: Record<string, unknown>, requested?: number | 'auto') => workerCount(parseConfig(raw, 'memberkit.config.json'), requested, 4).count;
    expect(count({})).toBe(1);
    expect(count({ catalogue: { type: 'sql', dialect: 'sqlite', connection: 'x.db' } })).toBe(1);
    expect(count({ storage: { type: 'tree', root: '/srv' }, wrap: { rightsHolder: 'CN=x' } })).toBe(4);
    expect(count({ catalogue: { type: 'sql', dialect: 'postgres', connection: PG_URL } })).toBe(4);
    expect(count({ catalogue: { type: 'sql', dialect: 'mysql', connection: 'mysql://root@127.0.0.1/test' } })).toBe(4);
    expect(count({ server: { workers: 3 } })).toBe(3);
    expect(count({ server: { workers: 3 } }, 1)).toBe(1);
    expect(count({}, 2)).toBe(2);
    expect(() => parseConfig({ server: { workers: 0 } }, 'memberkit.config.json')).toThrow(/server\.workers/);
  });
});
