// End-to-end harness of the Coordinating Node: a CN started the way the README says
// (`memberkit cn init DIR`, then `memberkit serve DIR` or `memberkit cn serve DIR`) in a child
// process on a fresh temp folder, real HTTP, XSD validation of every XML body received.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { mintToken } from '@memberkit/core';
import { describeFailures, looksLikeXml, validateXmlDocuments, type XmlDocument } from '@memberkit/testkit';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'packages/cli/src/bin.ts');

export const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The administrator of a CN started by the harness (also the subject `memberkit cn init` writes). */
export const CN_ADMIN = 'CN=memberkit developer,DC=local';

export type CnDatabase = 'sqlite' | 'postgres';

/** The databases the suites run on (MEMBERKIT_CN_DATABASES=sqlite limits them, e.g. while developing). */
export const DATABASES: readonly CnDatabase[] = (process.env.MEMBERKIT_CN_DATABASES?.split(',') as CnDatabase[] | undefined) ?? ['sqlite', 'postgres'];

/** Run a CLI command to completion (e.g. `cn init DIR`); resolves with its output, rejects on a non-zero exit. */
export function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json'), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(Object.assign(new Error(`memberkit ${args.join(' ')} exited with ${code}: ${stderr}`), { stdout, stderr, code }))));
  });
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b) ? merge(b as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

/** A PostgreSQL schema of its own, dropped by `drop()`. */
export interface PgSchema {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function freshPgSchema(): Promise<PgSchema> {
  const name = `mk_cn_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    name,
    url: url.toString(),
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await admin.end();
    },
  };
}

export interface StartCnOptions {
  /** Database of the catalogue and CN tables. Default sqlite. */
  database?: CnDatabase;
  /** Merged into the configuration `memberkit cn init` wrote (deeply, arrays replaced). */
  config?: Record<string, unknown>;
  /** `serve` (default: `memberkit serve DIR`) or `cn serve` (`memberkit cn serve DIR`). */
  command?: 'serve' | 'cn serve';
  /** A CN folder to serve again (kept by `stop({ keep: true })`; SQLite): no init, its configuration as it is. */
  dir?: string;
}

export interface CnProcess {
  child: ChildProcess;
  dir: string;
  port: number;
  /** `http://127.0.0.1:{port}/cn` (append `/v1/...` or `/v2/...`). */
  baseUrl: string;
  /** A bearer JWT for `subject` signed with the CN folder's signing key (which the CN trusts). */
  token(subject?: string, ttlSeconds?: number): Promise<string>;
  /** Everything the process wrote so far. */
  output(): string;
  /** Stop the process, drop its PostgreSQL schema and remove its folder (`keep`: leave both, to serve the folder again). */
  stop(options?: { keep?: boolean }): Promise<void>;
}

/** Start a CN on a fresh folder: `memberkit cn init`, configuration overrides, then serve on a free port. */
export async function startCn(options: StartCnOptions = {}): Promise<CnProcess> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'memberkit-cn-'));
  const schema = options.database === 'postgres' && !options.dir ? await freshPgSchema() : undefined;
  if (!options.dir) {
    await runCli(['cn', 'init', dir]);
    const file = join(dir, 'memberkit.config.json');
    let config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    config = merge(config, { server: { host: '127.0.0.1' }, log: { level: 'warn' } });
    if (schema) config = merge(config, { catalogue: { type: 'sql', dialect: 'postgres', connection: schema.url } });
    if (schema) delete (config.catalogue as Record<string, unknown>).file;
    if (options.config) config = merge(config, options.config);
    writeFileSync(file, JSON.stringify(config, null, 2));
  }
  const command = options.command === 'cn serve' ? ['cn', 'serve'] : ['serve'];
  const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', CLI, ...command, dir, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const cleanup = async () => {
    await schema?.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the CN did not start: ${output}`));
      }, 45_000).unref();
      const onData = (d: Buffer) => {
        output += d.toString();
        const m = /memberkit coordinating node at http:\/\/localhost:(\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the CN exited with ${code}: ${output}`));
      });
    });
  } catch (err) {
    await cleanup();
    throw err;
  }
  const signingKey = readFileSync(join(dir, 'cn-jwt-key.pem'), 'utf8');
  return {
    child,
    dir,
    port,
    baseUrl: `http://127.0.0.1:${port}/cn`,
    token: (subject = CN_ADMIN, ttlSeconds = 3600) => mintToken(signingKey, { subject, ttlSeconds }),
    output: () => output,
    stop: async (stopping = {}) => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      if (!stopping.keep) await cleanup();
    },
  };
}

/** What a test received: status, headers, body text. */
export interface Received {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * An HTTP client for one CN that keeps every XML body it receives; `validate()` checks them
 * all against the XSDs (call it in afterEach) and throws listing the invalid ones.
 */
export class CnClient {
  private readonly bodies: XmlDocument[] = [];
  /** Bodies validated so far. */
  validated = 0;

  constructor(
    readonly baseUrl: string,
    private readonly defaultToken?: string,
  ) {}

  /** `path` is relative to the base (`/v2/formats`); `token: null` sends none. */
  async request(method: string, path: string, init: { token?: string | null; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Received> {
    const token = init.token === undefined ? this.defaultToken : init.token;
    const headers: Record<string, string> = { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...init.headers };
    const res = await fetch(this.baseUrl + path, { method, headers, redirect: 'manual', ...(init.body !== undefined ? { body: init.body } : {}) });
    const text = method === 'HEAD' ? '' : await res.text();
    // Every DataONE document is validated; the bytes of an object (get: 200 on /object/{id}) are what was stored.
    const objectBytes = method === 'GET' && res.status === 200 && /^\/v\d\/object\/./.test(path);
    const html = /html/i.test(res.headers.get('content-type') ?? '');
    if (text && !objectBytes && !html && looksLikeXml(text, res.headers.get('content-type'))) this.bodies.push({ label: `${method} ${path} -> ${res.status}`, xml: text });
    return { status: res.status, headers: res.headers, text };
  }

  get(path: string, init: { token?: string | null; headers?: Record<string, string> } = {}): Promise<Received> {
    return this.request('GET', path, init);
  }

  /** A multipart/form-data request of text fields (and file parts given as Blobs). */
  form(method: string, path: string, fields: Record<string, string | Blob>, init: { token?: string | null } = {}): Promise<Received> {
    const body = new FormData();
    for (const [k, v] of Object.entries(fields)) body.append(k, v);
    return this.request(method, path, { ...init, body });
  }

  async validate(): Promise<void> {
    const batch = this.bodies.splice(0);
    const failures = await validateXmlDocuments(batch);
    this.validated += batch.length;
    if (failures.length > 0) throw new Error(`${failures.length} XML bod${failures.length === 1 ? 'y is' : 'ies are'} not schema-valid:\n${describeFailures(failures)}`);
  }
}

/** The attributes of the root `<error>` of a DataONE error body. */
export function errorOf(r: Received): { name: string; errorCode: string; detailCode: string; description: string } {
  const attr = (n: string) => new RegExp(`<error[^>]*\\s${n}="([^"]*)"`).exec(r.text)?.[1] ?? '';
  return { name: attr('name'), errorCode: attr('errorCode'), detailCode: attr('detailCode'), description: /<description>([\s\S]*?)<\/description>/.exec(r.text)?.[1] ?? '' };
}
