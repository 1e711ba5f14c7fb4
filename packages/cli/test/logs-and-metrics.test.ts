// What an operator sees of a running node: one JSON line per request at info, expected
// failures without stacks, and a Prometheus /metrics endpoint on its own port, scraped and
// parsed with a strict text-format parser. Plus the progress a long scan shows.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../../test/support/node-process.js';
import { startProgress } from '../src/progress.js';
import { ROOT } from './support/cli-process.js';
import { parsePrometheusText, type Family } from './support/prometheus-text.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const FILES = 3;
let work: string;
let node: NodeProcess;
let metricsUrl: string;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

function logLines(): LogLine[] {
  return node
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${node.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'memberkit-observe-'));
  const tree = join(work, 'archive');
  mkdirSync(tree, { recursive: true });
  for (let i = 0; i < FILES; i++) writeFileSync(join(tree, `file-${i}.csv`), `a,b\n${i},${i}\n`);
  const dir = join(work, 'node');
  writeConfig(dir, {
    storage: { type: 'tree', root: tree },
    wrap: { rightsHolder: 'CN=archive owner' },
    metrics: { enabled: true, port: 0, host: '127.0.0.1' },
    log: { level: 'info' },
  });
  node = await startNodeProcess(dir);
  metricsUrl = await until('the metrics line', () => /metrics:\s+curl (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(node.output())?.[1]);
  await until('the first scan', () => logLines().find((l) => l.msg === 'wrap scan finished'));
});
afterAll(async () => {
  await node?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('request log', () => {
  it('one info line per request: route pattern, operation, status, bytes, whole ms, subject; never the token', async () => {
    const token = await testToken('CN=reader,DC=example');
    const res = await fetch(`${node.baseUrl}/v2/object?count=7`, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    expect(res.status).toBe(200);
    const line = await until('the request line', () => logLines().find((l) => l.msg === 'request' && l.op === 'MNRead.listObjects'));
    expect(line).toMatchObject({ level: 30, method: 'GET', route: '/mn/v2/object', status: 200, subject: 'CN=reader,DC=example', bytesOut: Buffer.byteLength(body) });
    expect(Number.isInteger(line.durationMs)).toBe(true);
    expect(node.output()).not.toContain(token);
    expect(node.output()).not.toContain('count=7');
  });

  it('NotFound and NotImplemented are info lines without a stack; no error line', async () => {
    expect((await fetch(`${node.baseUrl}/v2/object/no-such-object`)).status).toBe(404);
    expect((await fetch(`${node.baseUrl}/v2/query`)).status).toBe(501);
    const notFound = await until('the NotFound line', () => logLines().find((l) => l.msg === 'request' && l.error === 'NotFound'));
    expect(notFound).toMatchObject({ level: 30, op: 'MNRead.get', route: expect.stringMatching(/^\/mn\/v2\/object\/:id/), status: 404, subject: 'public' });
    const notImplemented = await until('the NotImplemented line', () => logLines().find((l) => l.msg === 'request' && l.error === 'NotImplemented'));
    expect(notImplemented).toMatchObject({ level: 30, status: 501 });
    expect(logLines().filter((l) => l.level >= 50)).toEqual([]);
    expect(node.output()).not.toMatch(/^\s+at /m);
  });

  it('the banner is on stderr, apart from the JSON lines', () => {
    const banner = node.output().split('\n').find((l) => l.startsWith('memberkit node at '));
    expect(banner).toMatch(/^memberkit node at http:\/\/localhost:\d+\/mn$/);
  });
});

describe('/metrics', () => {
  let families: Map<string, Family>;
  beforeAll(async () => {
    await fetch(`${node.baseUrl}/v2/monitor/ping`);
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    families = parsePrometheusText(await res.text());
  });

  const family = (name: string, type: Family['type']) => {
    const f = families.get(name);
    expect(f, name).toBeDefined();
    expect(f!.type).toBe(type);
    return f!;
  };

  it('requests by operation and status, latency histograms, bytes out', () => {
    const requests = family('memberkit_http_requests_total', 'counter');
    expect(requests.samples.find((s) => s.labels.operation === 'MNCore.ping' && s.labels.status === '200')?.value).toBeGreaterThanOrEqual(1);
    expect(requests.samples.find((s) => s.labels.operation === 'MNRead.get' && s.labels.status === '404')?.value).toBeGreaterThanOrEqual(1);
    const latency = family('memberkit_http_request_duration_seconds', 'histogram');
    expect(latency.samples.some((s) => s.name.endsWith('_bucket') && s.labels.operation === 'MNCore.ping' && s.labels.le === '+Inf')).toBe(true);
    expect(family('memberkit_http_response_bytes_total', 'counter').samples.find((s) => s.labels.operation === 'MNRead.listObjects')?.value).toBeGreaterThan(0);
    family('memberkit_http_request_bytes_total', 'counter');
  });

  it('catalogue size and scan state', () => {
    expect(family('memberkit_catalogue_objects', 'gauge').samples[0]?.value).toBe(FILES);
    expect(family('memberkit_scan_running', 'gauge').samples[0]?.value).toBe(0);
    expect(family('memberkit_scan_files', 'gauge').samples.find((s) => s.labels.result === 'added')?.value).toBe(FILES);
    expect(family('memberkit_scans_total', 'counter').samples.find((s) => s.labels.outcome === 'ok')?.value).toBeGreaterThanOrEqual(1);
    family('memberkit_jobs', 'gauge');
    family('process_cpu_user_seconds_total', 'counter');
  });

  it('is not on the API port', async () => {
    expect((await fetch(`http://127.0.0.1:${node.port}/metrics`)).status).toBe(404);
  });
});

describe('scan progress', () => {
  it('the first scan ends with one info line: what it added, its duration and the CPU the process spent on it', () => {
    const finished = logLines().filter((l) => l.msg === 'wrap scan finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ level: 30, added: FILES, changed: 0, removed: 0 });
    expect(Number.isInteger(finished[0]!.durationMs)).toBe(true);
    // Whole milliseconds of every thread of the process (hashing three files costs some).
    expect(Number.isInteger(finished[0]!.cpuMs) && (finished[0]!.cpuMs as number) > 0).toBe(true);
  });

  it('without a terminal: a log line every interval with seen, hashed, rate', async () => {
    const lines: Array<{ fields: Record<string, unknown>; msg?: string }> = [];
    const logger = { info: (fields: object, msg?: string) => lines.push({ fields: fields as Record<string, unknown>, msg }), warn() {}, error() {}, debug() {} };
    const progress = await startProgress({ label: 'wrap scan', logger, tty: false, intervalMs: 20 });
    progress.update({ added: 40, changed: 2, removed: 0, unchanged: 8, skipped: [], durationMs: 2000, bytesHashed: 4096 });
    await new Promise((r) => setTimeout(r, 100));
    progress.stop();
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(lines.length).toBe(count);
    expect(lines[0]).toEqual({ msg: 'wrap scan progress', fields: expect.objectContaining({ seen: 50, hashed: 42, unchanged: 8, bytesHashed: 4096, filesPerSecond: 25, elapsedSeconds: 2 }) });
  });

  it('on a terminal, `memberkit scan` draws a live progress line', async () => {
    const dir = join(work, 'node');
    const command = `TSX_TSCONFIG_PATH=${join(ROOT, 'tsconfig.dev.json')} ${process.execPath} --conditions=@memberkit/source --import tsx ${join(ROOT, 'packages/cli/src/bin.ts')} scan ${dir}`;
    // `script` runs the command on a pseudo-terminal, as an operator's shell would.
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise((r) => child.once('close', r));
    expect(code, out).toBe(0);
    expect(out).toMatch(/wrap scan: 3 seen \| \d+ hashed \| \d+ unchanged \| \d+ skipped \| [\d.]+ (B|KiB|MiB) read \| \d+ files\/s \| \d+ s \| ETA \d+ s/);
    expect(out).toMatch(/added 0, changed 0, removed 0, unchanged 3/);
  });
});
