import { defineConfig } from 'vitest/config';

const report = process.env.CAPNODE_TEST_REPORT;

export default defineConfig({
  resolve: { conditions: ['@capnode/source'] },
  ssr: { resolve: { conditions: ['@capnode/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
  },
});
