// A write whose catalogue change committed but then failed (here: the SQLite write-ahead log
// could not be flushed, EIO) keeps its bytes: removing them, as was done for every failed
// change, left an object whose record is served and whose bytes are gone. A change that did
// not commit still leaves no bytes behind. Real SQLite catalogue and managed files, in process.
import { readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { expectSpecError, startInProcessNode, type InProcessNode } from './helpers/in-process-node.js';

let node: InProcessNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

/** Every file under the managed store's objects folder. */
async function storedFiles(n: InProcessNode): Promise<string[]> {
  const entries = await readdir(join(n.dir, 'objects', 'objects'), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => e.name).sort();
}

/** A flush of the write-ahead log that fails with EIO while `failing` is set (fdatasync otherwise). */
function failingFlush(): { failing: boolean; walFlush: (handle: FileHandle) => Promise<void> } {
  const flush = {
    failing: false,
    walFlush: async (handle: FileHandle) => {
      if (flush.failing) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      await handle.datasync();
    },
  };
  return flush;
}

it('keeps the bytes of a create or update whose commit landed though the flush of the log failed, and serves them', async () => {
  const flush = failingFlush();
  node = await startInProcessNode({ walFlush: flush.walFlush });
  expect((await node.create('v2', 'before')).status).toBe(200);
  flush.failing = true;
  const refused = await node.create('v2', 'flush-failed', { bytes: 'the bytes of flush-failed\n' });
  // The caller learns that the object may be there, not only that something failed.
  expectSpecError(refused, 'MNStorage.create', 'ServiceFailure', 'flush-failed');
  expect(refused.text).toContain('flush-failed&apos; was stored, but the node could not confirm that it is safely on disk; read its system metadata before sending it again');
  flush.failing = false;
  // The change committed: the record is there, and so must be its bytes.
  const meta = await node.meta('v2', 'flush-failed');
  expect(meta.size).toBe('the bytes of flush-failed\n'.length);
  const got = await node.call('GET', '/v2/object/flush-failed', { as: 'admin' });
  expect(got.status).toBe(200);
  expect(got.text).toBe('the bytes of flush-failed\n');
  // The same for an update (the new version's bytes; the old version is obsoleted by it).
  flush.failing = true;
  expectSpecError(await node.update('v2', 'before', 'before.2', { bytes: 'version 2\n' }), 'MNStorage.update', 'ServiceFailure', 'before.2');
  flush.failing = false;
  expect((await node.meta('v2', 'before')).obsoletedBy).toBe('before.2');
  expect((await node.call('GET', '/v2/object/before.2', { as: 'admin' })).text).toBe('version 2\n');
});

it('still removes the bytes of a create the catalogue refused at its commit', async () => {
  node = await startInProcessNode();
  expect((await node.create('v2', 'first')).status).toBe(200);
  const before = await storedFiles(node);
  // Two creates of one new identifier at once: both pass the early checks and store their
  // bytes; the second commit is refused (the identifier is taken) and its bytes must go.
  const answers = await Promise.all([node.create('v2', 'raced', { bytes: 'one\n' }), node.create('v2', 'raced', { bytes: 'two\n' })]);
  const statuses = answers.map((a) => a.status).sort();
  expect(statuses).toEqual([200, 409]);
  expectSpecError(answers.find((a) => a.status === 409)!, 'MNStorage.create', 'IdentifierNotUnique', 'raced');
  const after = await storedFiles(node);
  expect(after).toHaveLength(before.length + 1);
  const got = await node.call('GET', '/v2/object/raced', { as: 'admin' });
  expect(['one\n', 'two\n']).toContain(got.text);
});

it('says that a change was made when only the flush of the log failed, for every write (updateSystemMetadata, archive)', async () => {
  const flush = failingFlush();
  node = await startInProcessNode({ walFlush: flush.walFlush });
  expect((await node.create('v2', 'kept')).status).toBe(200);
  const before = await node.meta('v2', 'kept');
  flush.failing = true;
  // Before: "the storage backend is unavailable; retry later", and a retry with the same
  // serialVersion was then refused as stale although the first call had been applied.
  const changed = await node.updateSystemMetadata('kept', { ...before, formatId: 'text/plain' });
  expectSpecError(changed, 'MNStorage.updateSystemMetadata', 'ServiceFailure', 'kept');
  expect(changed.text).toContain('was made, but the node could not confirm that it is safely on disk; read the object&apos;s system metadata before sending it again');
  const archived = await node.call('PUT', '/v2/archive/kept', { as: 'writer' });
  expectSpecError(archived, 'MNStorage.archive', 'ServiceFailure', 'kept');
  expect(archived.text).toContain('the change to &apos;kept&apos; was made, but the node could not confirm');
  flush.failing = false;
  const after = await node.meta('v2', 'kept');
  expect(after.formatId).toBe('text/plain');
  expect(after.archived).toBe(true);
  expect(after.serialVersion).toBe(before.serialVersion + 2);
});
