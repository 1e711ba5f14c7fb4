// The README's curl walk-through, run verbatim (bash, curl) against `memberkit serve` on a
// fresh data folder: the first-run configuration, a token from `memberkit token`, create, get, describe,
// update, SID resolution, archive and the log must all work exactly as written.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startNodeProcess, type NodeProcess } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const block = /```bash walkthrough\n([\s\S]*?)```/.exec(README)?.[1];

let work: string;
let node: NodeProcess;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'memberkit-readme-'));
  // `npm start` names no folder and so creates ./data on first run; a named folder needs --init.
  node = await startNodeProcess(join(work, 'data'), ['--init']);
  // The walk-through runs `npm run -s memberkit -- token ...` at the repository root; here
  // its folder (holding data/) gets the same script, pointing at this checkout.
  const memberkit = `TSX_TSCONFIG_PATH=${join(ROOT, 'tsconfig.dev.json')} node --conditions=@memberkit/source --import ${join(ROOT, 'node_modules/tsx/dist/loader.mjs')} ${join(ROOT, 'packages/cli/src/bin.ts')}`;
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'readme-walkthrough', private: true, scripts: { memberkit } }));
});
afterAll(async () => {
  await node?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('the walk-through works verbatim', () => {
  expect(block, 'README.md has a ```bash walkthrough block').toBeDefined();
  const out = execFileSync('bash', ['-euo', 'pipefail', '-c', block!], {
    cwd: work,
    env: { ...process.env, MN: `${node.baseUrl}/v2` },
    encoding: 'utf8',
  });
  // create and update answer identifier documents
  expect(out).toContain('<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">hello-1</d1:identifier>');
  expect(out).toContain('<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">hello-2</d1:identifier>');
  // get returns the bytes; the SID gives the newest version
  expect(out).toContain('site,temp\nA,12.5\nB,13.1\n');
  // describe headers
  expect(out).toMatch(/dataone-checksum: SHA-1,[0-9a-f]{40}/i);
  expect(out).toMatch(/content-length: 17/i);
  // archive flagged, obsolescence recorded, events logged
  expect(out).toContain('<archived>true</archived>');
  expect(out).toContain('<obsoletes>hello-1</obsoletes>');
  expect(out).toMatch(/<d1:log [^>]*total="[4-9]"/);
  expect(out).not.toContain('<error');
});
