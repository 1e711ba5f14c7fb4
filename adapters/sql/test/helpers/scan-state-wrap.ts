// The testkit's wrap suite over a directory tree with the catalogue and scan state on one
// dialect: every node of a root shares one fresh database, as processes on one catalogue do.
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTreeStorage } from '@memberkit/adapter-filesystem';
import { runWrapSuite, type WrapRoot } from '@memberkit/testkit';
import type { SqlDialectName } from '../../src/index.js';
import { startWrapNode } from '../../../../test/helpers/wrap-node.js';
import { freshDatabase, type FreshDatabase } from './databases.js';

export function runWrapSuiteOn(dialect: SqlDialectName): void {
  const roots = new WeakMap<WrapRoot, { dir: string; db: FreshDatabase }>();
  runWrapSuite(`tree, catalogue on ${dialect}`, {
    async root() {
      const dir = await mkdtemp(join(tmpdir(), `mk-wrap-${dialect}-`));
      const tree = join(dir, 'tree');
      await mkdir(tree);
      const db = await freshDatabase(dialect);
      const root: WrapRoot = {
        async put(key, bytes) {
          await mkdir(dirname(join(tree, key)), { recursive: true });
          await writeFile(join(tree, key), bytes);
        },
        remove: (key) => unlink(join(tree, key)),
        async close() {
          await db.drop();
          await rm(dir, { recursive: true, force: true });
        },
      };
      roots.set(root, { dir, db });
      return root;
    },
    async node(root) {
      const { dir, db } = roots.get(root)!;
      const storage = createTreeStorage({ root: join(dir, 'tree') });
      const node = await startWrapNode(dir, storage, storage.root, { dialect, connection: db.connection });
      return { ...node, close: async () => { await node.close(); } };
    },
  });
}
