import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/bin.ts'],
  format: ['esm'],
  clean: true,
  target: 'node20',
  splitting: true,
  sourcemap: false,
  banner: { js: '#!/usr/bin/env node' },
});
