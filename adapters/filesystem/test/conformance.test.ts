// The shared conformance suites (@memberkit/testkit) against the filesystem adapter's
// stores: managed storage, read-only tree storage (wrap mode) and the SQLite catalogue and
// event log. Adapter-specific cases (symlinks, crash leftovers, migrations) live beside this
// file; this one only wires factories.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { StorageAdapter } from '@memberkit/types';
import { runEventLogSuite, runJobStoreSuite, runMetadataAdapterSuite, runStorageAdapterSuite } from '@memberkit/testkit';
import { createFilesystemStorage, createTreeStorage, openSqliteStore, type SqliteStore } from '../src/index.js';

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

/** One SQLite file per test; the catalogue and the event log share it. */
const stores = new WeakMap<object, { store: SqliteStore; dir: string }>();

async function openStore(): Promise<{ store: SqliteStore; dir: string }> {
  const dir = await freshDir();
  const store = openSqliteStore({ file: join(dir, 'node.sqlite') });
  await store.open();
  return { store, dir };
}

async function closeStore(handle: { store: SqliteStore; dir: string } | undefined): Promise<void> {
  if (!handle) return;
  await handle.store.close();
  await rm(handle.dir, { recursive: true, force: true });
}

runMetadataAdapterSuite('SQLite catalogue', {
  async create() {
    const handle = await openStore();
    stores.set(handle.store.catalogue, handle);
    return handle.store.catalogue;
  },
  async destroy(catalogue) {
    await closeStore(stores.get(catalogue));
  },
});

runEventLogSuite('SQLite event log', {
  async create() {
    const handle = await openStore();
    stores.set(handle.store.eventLog, handle);
    return handle.store.eventLog;
  },
  async destroy(eventLog) {
    await closeStore(stores.get(eventLog));
  },
});

runJobStoreSuite('SQLite jobs', {
  async create() {
    const handle = await openStore();
    stores.set(handle.store.jobs, handle);
    return handle.store.jobs;
  },
  async destroy(jobs) {
    await closeStore(stores.get(jobs));
  },
});
