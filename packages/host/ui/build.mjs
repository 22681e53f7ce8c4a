#!/usr/bin/env node
// Builds the dashboard UI (Preact, JSX through esbuild) into dist/ui/: index.html, app.js, app.css.
// Run by @capnode/host's `build` script after tsup. Everything is bundled: the page loads nothing
// from anywhere but the dashboard's own origin.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, '..', 'dist', 'ui');
mkdirSync(outDir, { recursive: true });

await build({
  entry: { app: join(here, 'src', 'main.tsx') },
  outDir,
  format: ['esm'],
  outExtension: () => ({ js: '.js' }),
  platform: 'browser',
  target: 'es2022',
  minify: true,
  dts: false,
  clean: false,
  sourcemap: false,
  splitting: false,
  noExternal: [/.*/],
  tsconfig: join(here, 'tsconfig.json'),
  silent: true,
  esbuildOptions(options) {
    options.jsx = 'automatic';
    options.jsxImportSource = 'preact';
    options.legalComments = 'none';
  },
});
copyFileSync(join(here, 'index.html'), join(outDir, 'index.html'));
copyFileSync(join(here, 'app.css'), join(outDir, 'app.css'));
