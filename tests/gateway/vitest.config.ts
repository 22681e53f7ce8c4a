import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The gateway interop suite: run it with `pnpm test:interop` (tests/gateway/run.mjs), which installs
// the real OpenClaw gateway and runs this config inside a loopback-only network namespace.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { conditions: ['@capnode/source'] },
  ssr: { resolve: { conditions: ['@capnode/source'] } },
  test: {
    include: ['tests/gateway/**/*.interop.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // One gateway at a time: each file starts its own, and the machine has two cores.
    fileParallelism: false,
  },
});
