import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('every MCP SDK package is pinned to an exact version in every package.json of the workspace', () => {
  const manifests = ['package.json', ...['apps', 'packages'].flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(dir, name, 'package.json')))];
  const seen: string[] = [];
  for (const path of manifests) {
    let manifest: Record<string, Record<string, string> | undefined>;
    try {
      manifest = JSON.parse(readFileSync(join(root, path), 'utf8'));
    } catch {
      continue;
    }
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (!name.startsWith('@modelcontextprotocol/')) continue;
        seen.push(`${path} ${name}`);
        expect(range, `${path} ${field}.${name}`).toMatch(/^\d+\.\d+\.\d+$/);
      }
    }
  }
  expect(seen.length).toBeGreaterThan(5);
});
