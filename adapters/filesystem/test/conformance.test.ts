// The shared conformance suites (@memberkit/testkit) against the filesystem adapter's
// stores of bytes: managed storage and read-only tree storage (wrap mode). The embedded
// catalogue, event log and jobs are adapters/sql on SQLite (adapters/sql/test/native-sqlite).
// Adapter-specific cases (symlinks, crash leftovers) live beside this file; this one only
// wires factories.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { StorageAdapter } from '@memberkit/types';
import { runStorageAdapterSuite } from '@memberkit/testkit';
import { createFilesystemStorage, createTreeStorage } from '../src/index.js';

/** Temporary directories made for each instance, removed by destroy. */
const dirs = new WeakMap<object, string>();

async function freshDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'memberkit-conformance-'));
}

runStorageAdapterSuite('filesystem managed storage', {
  async create() {
    const root = await freshDir();
    const storage = createFilesystemStorage({ root });
    await storage.open();
    dirs.set(storage, root);
    return storage;
  },
  async destroy(storage) {
    await storage.close?.();
    await rm(dirs.get(storage)!, { recursive: true, force: true });
  },
});

runStorageAdapterSuite('filesystem tree storage (wrap mode)', {
  async create() {
    const root = await freshDir();
    const storage = createTreeStorage({ root });
    await storage.open();
    dirs.set(storage, root);
    return storage;
  },
  async destroy(storage) {
    await storage.close?.();
    await rm(dirs.get(storage)!, { recursive: true, force: true });
  },
  // Wrap mode: the archive's files are put in place behind the adapter; the key is the
  // file's relative POSIX path.
  async seed(storage: StorageAdapter, name: string, bytes: Uint8Array) {
    const file = join(dirs.get(storage)!, ...name.split('/'));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
    return name;
  },
});
