import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/bin.ts'],
  format: ['esm'],
  clean: true,
  target: 'node20',
  splitting: true,
  sourcemap: false,
  // The fast path (--list-tools, --command) is one file: the dependency-free paths module is bundled
  // in; the host, the MCP server and the SDK stay external and load only for serve / mcp / token.
  noExternal: ['@capnode/host/paths'],
  banner: { js: '#!/usr/bin/env node' },
});
