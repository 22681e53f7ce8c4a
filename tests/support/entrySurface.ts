import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** The bare (non-relative) specifiers of every module an entry loads, following relative imports. */
function bareImportsOf(entryFile: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
    modules.set(file, specifiers.filter((specifier) => !specifier.startsWith('.')));
    for (const specifier of specifiers) if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
  };
  visit(entryFile);
  return modules;
}

/**
 * The files (absolute `.ts` paths) loaded as soon as `entryFile` is imported: the entry and every file
 * reached through static relative `import … from` / `export … from` (not `import type`, not `import()`).
 */
export function staticImportGraph(entryFile: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)[^'"]*?from\s+'(\.[^']+)'/gm)) visit(join(dirname(file), match[1]!.replace(/\.js$/, '.ts')));
  };
  visit(entryFile);
  return seen;
}

/** Asserts that every bare import in the module graph of `entryFile` (an absolute `.ts` path) passes `allowed`. */
export function expectEntryImports(entryFile: string, allowed: (specifier: string) => boolean): void {
  const graph = bareImportsOf(entryFile);
  expect(graph.size).toBeGreaterThan(0);
  for (const [file, specifiers] of graph) {
    for (const specifier of specifiers) expect(allowed(specifier), `${file} imports ${specifier}`).toBe(true);
  }
}

/** The surface checks of one package's entries, named relative to the test file's directory (`index.ts`, `node.ts`). */
export interface EntrySurface {
  /** Asserts that every bare import in the entry's module graph passes `allowed`. */
  expectImports(entry: string, allowed: (specifier: string) => boolean): void;
  /** Asserts that the entry's runtime exports are exactly `names` (sorted). */
  expectExports(entry: string, names: readonly string[]): Promise<void>;
}

/** The surface checks for the entries beside the test file at `testFileUrl` (pass `import.meta.url`). */
export function entrySurface(testFileUrl: string): EntrySurface {
  const directory = dirname(fileURLToPath(testFileUrl));
  return {
    expectImports: (entry, allowed) => expectEntryImports(join(directory, entry), allowed),
    async expectExports(entry, names) {
      const module = (await import(join(directory, entry))) as Record<string, unknown>;
      expect(Object.keys(module).sort()).toEqual(names);
    },
  };
}
