import { defineConfig } from 'vitest/config';

// MEMBERKIT_TEST_REPORT (set by .ci/run) adds vitest's JSON report, from which CI prints
// its `N passed, N failed` line.
const report = process.env.MEMBERKIT_TEST_REPORT;

export default defineConfig({
  resolve: { conditions: ['@memberkit/source'] },
  ssr: { resolve: { conditions: ['@memberkit/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'adapters/*/test/**/*.test.ts', 'adapters/*/src/**/*.test.ts', 'templates/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
  },
});
