// Starting the nodes under test: `memberkit serve` in a separate process with a generated
// configuration (test/support/node-process.ts), this checkout's CLI or, with --compare, the
// ref's own CLI in its worktree on the same configuration; and capturing answers for baselines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../test/support/node-process.js';
import { currentBackend } from './backend.js';
import { startServerProcess, type ServerProcess } from './common.js';
import { CompareError, type RefCheckout } from './compare.js';

export const WRITER = `Bearer ${await testToken('CN=writer')}`;
export const ADMIN = `Bearer ${await testToken('CN=admin')}`;

/** The line of a failed start that says why (a configuration error names its key). */
function reason(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.find((l) => /config|unknown|invalid|expected/i.test(l)) ?? lines.at(-1) ?? 'no output').slice(0, 300);
}

/**
 * A node on `dir` with the bench backend's storage and catalogue (unless `overrides` names its
 * own), started with this checkout's CLI or, given `ref`, with the ref's.
 */
export async function startMemberkit(dir: string, overrides: Record<string, unknown> = {}, ref?: RefCheckout): Promise<NodeProcess> {
  writeConfig(dir, { ...(await currentBackend().config(dir)), ...overrides });
  let node: NodeProcess;
  try {
    node = await startNodeProcess(dir, [], ref?.root);
  } catch (err) {
    if (!ref) throw err;
    throw new CompareError(`--compare ${ref.ref}: memberkit ${ref.short} cannot start on the configuration this checkout generates: ${reason(err instanceof Error ? err.message : String(err))}`);
  }
  // Warm up: the first request loads lazily imported code.
  await fetch(`${node.baseUrl}/v2/node`).then((r) => r.arrayBuffer());
  return node;
}

const HOP_BY_HOP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export interface CapturedRoute {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/** memberkit's answer to `url` (method GET or HEAD), as a fixed route for the Hono baseline. */
export async function capture(url: string, method: 'GET' | 'HEAD' = 'GET', headers: Record<string, string> = {}): Promise<CapturedRoute> {
  const res = await fetch(url, { method, headers });
  const body = method === 'HEAD' ? null : await res.text();
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) out[name] = value;
  });
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${body ?? ''}`);
  return { path: new URL(url).pathname, status: res.status, headers: out, body };
}

/** A bare Hono server answering each captured route with the same status, headers and body. */
export async function startFixedHono(dir: string, routes: CapturedRoute[]): Promise<ServerProcess> {
  const file = join(dir, 'routes.json');
  writeFileSync(file, JSON.stringify(routes));
  return startServerProcess('baselines/fixed-hono.ts', [file]);
}
