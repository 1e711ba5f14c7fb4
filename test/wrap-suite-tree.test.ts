// The wrap suite (@memberkit/testkit runWrapSuite) over a directory tree (TreeStorageAdapter).
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTreeStorage } from '@memberkit/adapter-filesystem';
import { runWrapSuite, type WrapRoot } from '@memberkit/testkit';
import { startWrapNode } from './helpers/wrap-node.js';

const dirs = new WeakMap<WrapRoot, string>();

runWrapSuite('tree', {
  async root() {
    const dir = await mkdtemp(join(tmpdir(), 'mk-wrap-suite-'));
    const tree = join(dir, 'tree');
    await mkdir(tree);
    const root: WrapRoot = {
      async put(key, bytes) {
        await mkdir(dirname(join(tree, key)), { recursive: true });
        await writeFile(join(tree, key), bytes);
      },
      remove: (key) => unlink(join(tree, key)),
      close: () => rm(dir, { recursive: true, force: true }),
    };
    dirs.set(root, dir);
    return root;
  },
  async node(root) {
    const dir = dirs.get(root)!;
    const storage = createTreeStorage({ root: join(dir, 'tree') });
    const node = await startWrapNode(dir, storage, storage.root);
    return { ...node, close: async () => { await node.close(); } };
  },
});
