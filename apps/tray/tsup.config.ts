import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { bin: 'src/bin.ts' },
  format: ['esm'],
  target: 'node20',
  sourcemap: false,
  clean: true,
  banner: { js: '#!/usr/bin/env node' },
});
