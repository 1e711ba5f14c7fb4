import { configDefaults, defineConfig } from 'vitest/config';

// MEMBERKIT_TEST_REPORT (set by .ci/run) adds vitest's JSON report, from which CI prints
// its `N passed, N failed` line.
const report = process.env.MEMBERKIT_TEST_REPORT;

const ALL = ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'adapters/*/test/**/*.test.ts', 'adapters/*/src/**/*.test.ts', 'templates/*/test/**/*.test.ts', 'test/**/*.test.ts'];
// Suites that measure how long a node keeps other requests waiting (ping latency while hostile
// documents are uploaded and viewed): they run after every other file, one at a time, so that
// what they measure is the node, not the rest of the suite competing for the same two cores.
const LATENCY = ['test/hostile-uploads.test.ts', 'packages/query/test/hostile-process.test.ts', 'packages/views/test/large-package.test.ts'];

export default defineConfig({
  resolve: { conditions: ['@memberkit/source'] },
  ssr: { resolve: { conditions: ['@memberkit/source'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
    projects: [
      { extends: true, test: { name: 'main', include: ALL, exclude: [...configDefaults.exclude, ...LATENCY] } },
      { extends: true, test: { name: 'latency', include: LATENCY, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
