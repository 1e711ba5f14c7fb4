// Crash leftovers in a store several processes share: each process writes under a temp
// folder of its own (`tmp/<host>~<pid namespace>~<pid>~<random>`); open() removes the folder
// of a process of this host that no longer runs, whatever its age, and never a live one's.
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { receiveUpload } from '@memberkit/core';
import { createFilesystemStorage } from '../src/managed-storage.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-temp-owners-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const host = hostname().replace(/[^\w.-]/g, '_');
const ns = readlinkSync('/proc/self/ns/pid').replace(/\D/g, '');

async function filesUnder(path: string): Promise<string[]> {
  const out = await readdir(path, { recursive: true, withFileTypes: true });
  return out.filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name).slice(path.length + 1)).sort();
}

/** The pid of a process that has exited, and a live child's (killed by the caller). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

async function leftover(folder: string, name = 'upload.part'): Promise<void> {
  await mkdir(join(dir, 'tmp', folder), { recursive: true });
  await writeFile(join(dir, 'tmp', folder, name), 'partial bytes');
}

describe('per-process temp folders', () => {
  it('writes go to a folder named after this process, removed by close() once empty', async () => {
    const store = createFilesystemStorage({ root: dir });
    await store.open();
    // Larger than a small write (held in memory until commit): spooled to a temp file.
    const pending = await receiveUpload(store, (async function* () { yield Buffer.alloc(200_000, 0x78); })());
    const [only] = await filesUnder(join(dir, 'tmp'));
    expect(only).toMatch(new RegExp(`^${host.replace(/\./g, '\\.')}~${ns}~${process.pid}~[0-9a-f]{8}/[0-9a-f]{32}\\.part$`));
    await pending.abort();
    await store.close();
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });

  it("open() removes a dead process's folder at once, keeps a live process's and other hosts' fresh files", async () => {
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const dead = await deadPid();
      await leftover(`${host}~${ns}~${dead}~aaaaaaaa`);
      await leftover(`${host}~${ns}~${live.pid}~bbbbbbbb`);
      await leftover(`elsewhere~${ns}~${dead}~cccccccc`);
      await leftover(`${host}~1~${dead}~dddddddd`); // same host, another PID namespace (a container)
      await writeFile(join(dir, 'tmp', 'legacy.part'), 'before per-process folders');
      await mkdir(join(dir, 'objects'), { recursive: true });
      const store = createFilesystemStorage({ root: dir });
      await store.open();
      expect(await filesUnder(join(dir, 'tmp'))).toEqual([
        `${host}~${ns}~${live.pid}~bbbbbbbb/upload.part`,
        `${host}~1~${dead}~dddddddd/upload.part`,
        `elsewhere~${ns}~${dead}~cccccccc/upload.part`,
        'legacy.part',
      ].sort());
      await store.close();
    } finally {
      live.kill('SIGKILL');
    }
  });

  it('files nobody can vouch for go once older than staleTempMs; a foreign idle empty folder too', async () => {
    const dead = await deadPid();
    await leftover(`elsewhere~${ns}~${dead}~cccccccc`);
    const old = new Date(Date.now() - 2 * 3600_000);
    await utimes(join(dir, 'tmp', `elsewhere~${ns}~${dead}~cccccccc`, 'upload.part'), old, old);
    await utimes(join(dir, 'tmp', `elsewhere~${ns}~${dead}~cccccccc`), old, old);
    const store = createFilesystemStorage({ root: dir });
    await store.open();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    await store.close();
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });

  it('a write recreates its folder if something removed it', async () => {
    const store = createFilesystemStorage({ root: dir });
    await store.open();
    await rm(join(dir, 'tmp'), { recursive: true });
    const pending = await receiveUpload(store, (async function* () { yield Buffer.from('y'); })());
    expect(await pending.commit('p')).toMatch(/^objects\//);
    await store.close();
  });
});
