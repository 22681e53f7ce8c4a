import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/**
 * The host's layers, lowest first, each named by the folders (or root files) it holds. A module may
 * import its own layer and the layers before it, never one after: leaf helpers know nothing of the
 * parts, a part reaches a later part only through a port handed to it by `createHost`. A new part
 * is a new folder under `parts/`, listed here where it belongs.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts'],
  ['logging/'],
  ['files/'],
  ['locks/'],
  ['status/'],
  ['config/'],
  ['skill/'],
  ['setup/'],
  ['audit/'],
  ['parts/pipeline/'],
  ['context/'],
  ['parts/approvals/'],
  ['parts/plugins/'],
  ['parts/imports/'],
  ['parts/browser/'],
  ['parts/gateway/'],
  ['parts/openagent/'],
  ['parts/admin/'],
  ['parts/listener/'],
  ['parts/stdio/'],
  ['parts/dashboard/'],
  ['parts/app/'],
  ['host/'],
  ['docs/'],
  ['index.ts', 'setup.ts', 'settings.ts', 'docs.ts'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The layer of a file, by its path relative to `src/` (with `/` separators). */
function layerOf(file: string): number {
  const path = relative(SRC, file).split(sep).join('/');
  return LAYERS.findIndex((layer) => layer.some((prefix) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix)));
}

/** Every relative import and re-export of a file (type-only ones too). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')));
}

describe('host layers', () => {
  const files = sourceFiles(SRC);

  it('places every source file in a layer', () => {
    expect(files.filter((file) => layerOf(file) < 0).map((file) => relative(SRC, file))).toEqual([]);
  });

  it('has no import running back up the layers', () => {
    const upward = files.flatMap((file) =>
      relativeImports(file)
        .filter((target) => layerOf(target) > layerOf(file))
        .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`),
    );
    expect(upward).toEqual([]);
  });

  it('finds an upward import when there is one', () => {
    expect(layerOf(join(SRC, 'parts/dashboard/service.ts'))).toBeGreaterThan(layerOf(join(SRC, 'parts/listener/httpMode.ts')));
    expect(layerOf(join(SRC, 'files/secureFile.ts'))).toBeLessThan(layerOf(join(SRC, 'config/settings.ts')));
  });
});
