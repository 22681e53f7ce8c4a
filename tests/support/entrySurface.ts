import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/** Asserts that every bare import in the module graph of `entryFile` (an absolute `.ts` path) passes `allowed`. */
export function expectEntryImports(entryFile: string, allowed: (specifier: string) => boolean): void {
  const graph = bareImportsOf(entryFile);
  expect(graph.size).toBeGreaterThan(0);
  for (const [file, specifiers] of graph) {
    for (const specifier of specifiers) expect(allowed(specifier), `${file} imports ${specifier}`).toBe(true);
  }
}
