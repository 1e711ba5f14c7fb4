// `memberkit federation up DIR` (issue #20 item 10) run as the README says
// (`npm run -s memberkit -- federation up DIR` at the repository root, on a fresh folder): a CN
// and two MNs on loopback, registered and approved; listNodes shows both MNs, a token the CN
// signed creates an object on a Member Node, and Ctrl-C (SIGINT to the foreground process
// group, as a terminal sends it) stops all three. A second run on the same folder reuses it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NodeCodec, NodeListCodec, SystemMetadataCodec } from '@memberkit/types';
import { CnClient, runCli } from './harness.js';
import { processesOf } from '../../../test/support/processes.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const DEVELOPER = 'CN=memberkit developer,DC=local';

interface Federation {
  npm: ChildProcess;
  /** Resolves when npm's stdout and stderr are closed: every process writing to them has ended and all they wrote has been read. */
  closed: Promise<void>;
  output(): string;
  cn: string;
  mns: string[];
}

/** `npm run -s memberkit -- federation up DIR` in its own process group; resolves once it printed what to try. */
async function federationUp(dir: string): Promise<Federation> {
  const npm = spawn('npm', ['run', '-s', 'memberkit', '--', 'federation', 'up', dir], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const closed = new Promise<void>((resolve) => npm.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`federation up did not get ready: ${output}`)), 240_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('Ctrl-C stops all three')) {
        clearTimeout(timer);
        resolve();
      }
    };
    npm.stdout!.on('data', onData);
    npm.stderr!.on('data', onData);
    npm.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`federation up exited with ${code}: ${output}`));
    });
  });
  const urls = [...output.matchAll(/ (http:\/\/127\.0\.0\.1:\d+\/(cn|mn)) /g)].map((m) => m[1]!);
  return { npm, closed, output: () => output, cn: urls.find((u) => u.endsWith('/cn'))!, mns: urls.filter((u) => u.endsWith('/mn')) };
}

/** Ctrl-C: SIGINT to the whole process group (npm ends on it, as in a terminal); resolves when no process of the federation is left. */
async function interrupt(f: Federation, dir: string): Promise<void> {
  if (f.npm.exitCode === null && f.npm.signalCode === null) {
    const exited = new Promise<void>((resolve) => f.npm.once('exit', () => resolve()));
    process.kill(-f.npm.pid!, 'SIGINT');
    await exited;
  }
  const deadline = Date.now() + 30_000;
  while (processesOf(dir).length > 0) {
    if (Date.now() > deadline) throw new Error(`processes of ${dir} still running after Ctrl-C: ${processesOf(dir).join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // npm's 'exit' can come before the last of the output is read (a quick stop): read it all first.
  await f.closed;
  expect(f.output()).toContain('stopping the federation');
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

describe('memberkit federation up', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'memberkit-federation-up-')), 'fed');
  let running: Federation | undefined;
  const clients: CnClient[] = [];
  const client = (base: string) => {
    const c = new CnClient(base);
    clients.push(c);
    return c;
  };

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.validate();
  });
  afterAll(async () => {
    if (running) await interrupt(running, dir).catch(() => undefined);
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('starts a CN and two registered, approved Member Nodes; a CN-signed token writes to a Member Node; Ctrl-C stops all three', { timeout: 400_000 }, async () => {
    running = await federationUp(dir);
    const { cn, mns } = running;
    expect(cn).toBeDefined();
    expect(mns).toHaveLength(2);
    expect(running.output()).toContain(`curl -s ${cn}/v2/node`);

    // listNodes: the CN and both Member Nodes, at the addresses they serve.
    const cnClient = client(cn);
    for (const version of ['v1', 'v2']) {
      const list = await cnClient.get(`/${version}/node`);
      expect(list.status).toBe(200);
      const nodes = NodeListCodec.decode(list.text).node;
      expect(nodes.map((n) => n.identifier)).toEqual(['urn:node:CNLOCAL', 'urn:node:LOCALMN1', 'urn:node:LOCALMN2']);
      expect(nodes.filter((n) => n.type === 'mn').map((n) => n.baseURL)).toEqual(mns);
    }
    // The registered document is the Member Node's own (as `memberkit register` sent it).
    for (const [i, mn] of mns.entries()) {
      const own = NodeCodec.decode((await client(mn).get('/v2/node')).text);
      const registered = NodeCodec.decode((await cnClient.get(`/v2/node/urn:node:LOCALMN${i + 1}`)).text);
      expect(registered).toMatchObject({ identifier: own.identifier, baseURL: own.baseURL, subject: own.subject, contactSubject: [DEVELOPER] });
      expect(registered.services?.service.map((s) => `${s.name}/${s.version}`)).toEqual(own.services?.service.map((s) => `${s.name}/${s.version}`));
    }

    // A token the CN signs, as the printed lines say, creates an object on a Member Node.
    const token = (await runCli(['cn', 'token', '--subject', DEVELOPER, join(dir, 'cn')])).stdout.trim();
    const bytes = Buffer.from('site,temp\nA,12.5\n');
    const sysmeta = SystemMetadataCodec.encode({
      identifier: 'federation-hello', formatId: 'text/csv', size: bytes.length,
      checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
      rightsHolder: DEVELOPER, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [],
    }, 'v2');
    const mn2 = client(mns[1]!);
    const created = await mn2.form('POST', '/v2/object', { pid: 'federation-hello', object: new Blob([bytes]), sysmeta: new Blob([sysmeta]) }, { token });
    expect(created.status, created.text).toBe(200);
    expect(SystemMetadataCodec.decode((await mn2.get('/v2/meta/federation-hello')).text)).toMatchObject({ submitter: DEVELOPER, authoritativeMemberNode: 'urn:node:LOCALMN2' });
    // The CN knows the developer as a verified account (a node's contact must be one).
    const me = await cnClient.get('/v2/diag/subject', { token });
    expect(me.status).toBe(200);
    expect(me.text).toContain('<verified>true</verified>');
    // The MN sends the CN a token the CN signed for the node's subject.
    const nodeToken = readFileSync(join(dir, 'mn1', 'cn-token.jwt'), 'utf8').trim();
    expect(JSON.parse(Buffer.from(nodeToken.split('.')[1]!, 'base64url').toString()).sub).toBe('CN=urn:node:LOCALMN1,DC=dataone,DC=org');

    // Ctrl-C: everything stops.
    await interrupt(running, dir);
    for (const url of [cn, ...mns]) expect(await answers(`${url}/v2/monitor/ping`), url).toBe(false);

    // A second run reuses the folder: same nodes, same ports, the object still there.
    running = await federationUp(dir);
    expect(running.cn).toBe(cn);
    expect(running.mns).toEqual(mns);
    expect(NodeListCodec.decode((await cnClient.get('/v2/node')).text).node).toHaveLength(3);
    expect((await mn2.get('/v2/meta/federation-hello')).status).toBe(200);
    await interrupt(running, dir);
    running = undefined;
  });
});
