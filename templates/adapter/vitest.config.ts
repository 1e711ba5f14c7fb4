import { defineConfig } from 'vitest/config';

// `npm test` in this package. Inside the memberkit repository the '@memberkit/source'
// condition makes vitest read the sibling packages' TypeScript sources (no build needed);
// the generator drops it for a package outside the repository (published packages: dist).
export default defineConfig({
  resolve: { conditions: ['@memberkit/source'] },
  ssr: { resolve: { conditions: ['@memberkit/source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
