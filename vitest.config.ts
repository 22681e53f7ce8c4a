import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@capnode/source'] },
  ssr: { resolve: { conditions: ['@capnode/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
