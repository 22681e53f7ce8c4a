import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE = /\.(?:ts|tsx|mts|js|mjs)$/;
/** Where the codes are defined: every other source names them by `JsonRpcErrorCode`. */
const DEFINITION = 'packages/protocol/src/errors.ts';

/** Source files under `packages/*\/src` and `apps/*\/src`, tests excluded. */
function sources(): string[] {
  const files: string[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (SOURCE.test(entry.name) && !/\.test\.|\.spec\./.test(entry.name)) {
        files.push(path);
      }
    }
  };
  for (const group of ['packages', 'apps']) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      const src = join(root, group, entry.name, 'src');
      if (entry.isDirectory()) {
        try {
          walk(src);
        } catch {
          // A package without src.
        }
      }
    }
  }
  return files;
}

/** Code with comments blanked out (docs may quote a code's number). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
}

describe('JSON-RPC error codes are named, never written raw (one module of replies per endpoint)', () => {
  it(`no raw -32xxx literal in packages/*/src or apps/*/src outside ${DEFINITION}`, () => {
    const offenders: string[] = [];
    for (const file of sources()) {
      const path = relative(root, file).split('\\').join('/');
      if (path === DEFINITION) continue;
      for (const match of codeOf(readFileSync(file, 'utf8')).matchAll(/-\s*32\d{3}\b/g)) offenders.push(`${path}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  it('finds a raw code in code and ignores one in a comment', () => {
    expect([...codeOf("const a = { code: -32603 }; // -32601\n/** -32600 */").matchAll(/-\s*32\d{3}\b/g)].map((m) => m[0])).toEqual(['-32603']);
  });
});
