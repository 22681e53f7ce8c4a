import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

/** The subcommands `bin.ts` loads with `import()`; every module in src/commands is an entry. */
const commands = readdirSync('src/commands')
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => name.slice(0, -'.ts'.length));

const shared: Options = {
  target: 'node20',
  sourcemap: false,
  define: { __CAPNODE_VERSION__: JSON.stringify(version) },
  // The dependency-free setup entry (paths) and the toolkit (ESM-only, and the CommonJS fast path cannot
  // require it on every Node 20) are bundled in; the host, the MCP server and the SDK stay external and
  // load only for serve / mcp / token and the other lazily imported commands.
  noExternal: ['@capnode/host/setup', '@capnode/protocol/node', /^@capnode\/toolkit(?:\/|$)/],
};

export default defineConfig([
  {
    // The fast path (--help, --version, --list-tools, --command) is ONE CommonJS file with no chunks:
    // Node 20's ESM loader and several chunk files cost ~20 ms of cold start. Its `import()`s of
    // ./commands/*.js stay dynamic and point at the ESM builds below.
    ...shared,
    entry: { bin: 'src/bin.ts' },
    format: ['cjs'],
    outExtension: () => ({ js: '.js' }),
    splitting: false,
    clean: ['!commands/**'],
    banner: { js: '#!/usr/bin/env node' },
    esbuildPlugins: [
      {
        name: 'lazy-commands',
        setup(build) {
          build.onResolve({ filter: /^\.\/commands\/[^/]+\.js$/ }, (args) =>
            args.kind === 'dynamic-import' ? { path: args.path.replace(/\.js$/, '.mjs'), external: true } : undefined,
          );
        },
      },
    ],
  },
  {
    ...shared,
    entry: Object.fromEntries(commands.map((name) => [name, `src/commands/${name}.ts`])),
    outDir: 'dist/commands',
    format: ['esm'],
    outExtension: () => ({ js: '.mjs' }),
    splitting: true,
    clean: true,
    esbuildPlugins: [
      {
        // One error module for both bundles: the commands import CliError from dist/bin.js (already
        // loaded: it imported them), so a CliError thrown here is the class bin.js catches.
        name: 'shared-errors',
        setup(build) {
          build.onResolve({ filter: /^\.\.?\/errors\.js$/ }, () => ({ path: '../bin.js', external: true }));
        },
      },
    ],
  },
]);
