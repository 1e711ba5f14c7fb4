// The CN's commands as the README gives them: `memberkit cn init DIR` (configuration and the
// CN's signing key pair), `memberkit cn serve DIR` and `memberkit serve DIR` (node.type "cn"),
// and an operator's mistake in the configuration reported as one line naming the setting.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CnClient, runCli, startCn, type CnProcess } from './harness.js';

describe('memberkit cn', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'memberkit-cn-cli-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('cn init writes a CN configuration (node.type cn, /cn on 8090, SQLite) and the signing key pair; a second init is refused', async () => {
    const dir = fresh();
    const { stdout } = await runCli(['cn', 'init', dir, '--identifier', 'urn:node:CNTEST']);
    expect(stdout).toContain(`memberkit cn serve ${dir}`);
    const config = JSON.parse(readFileSync(join(dir, 'memberkit.config.json'), 'utf8'));
    expect(config.node).toEqual({ type: 'cn', identifier: 'urn:node:CNTEST' });
    expect(config.server).toEqual({ port: 8090, basePath: '/cn' });
    expect(config.catalogue.type).toBe('sqlite');
    expect(existsSync(join(dir, 'cn-jwt-key.pem'))).toBe(true);
    expect(existsSync(join(dir, 'cn-jwt-key.pub.pem'))).toBe(true);
    await expect(runCli(['cn', 'init', dir])).rejects.toThrow(/already exists/);
  });

  it('a mistake in the configuration is one line naming the file and the setting', async () => {
    const dir = fresh();
    await runCli(['cn', 'init', dir]);
    const file = join(dir, 'memberkit.config.json');
    const config = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...config, cn: { changesToV2Objects: 'sometimes' } }));
    const failed = await runCli(['serve', dir, '--port', '0']).then(
      () => undefined,
      (err: { stderr: string }) => err.stderr,
    );
    expect(failed).toBeDefined();
    const lines = failed!.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
    expect(lines[0]).toContain('cn.changesToV2Objects');
  });
});

describe('memberkit cn serve', () => {
  let cn: CnProcess;
  let client: CnClient;
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client?.validate();
  });

  it('serves the CN of a folder as `memberkit serve` does', async () => {
    cn = await startCn({ command: 'cn serve' });
    client = new CnClient(cn.baseUrl);
    expect(cn.output()).toContain('memberkit coordinating node at http://localhost:');
    expect((await client.get('/v2/monitor/ping')).status).toBe(200);
    const caps = await client.get('/v2');
    expect(caps.status).toBe(200);
    expect(caps.text).toContain(`<baseURL>http://localhost:${cn.port}/cn</baseURL>`);
  });
});
