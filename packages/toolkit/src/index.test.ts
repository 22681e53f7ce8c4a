import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as toolkit from './index.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

/** Every module the root entry loads, following relative imports. */
function rootModuleGraph(): Map<string, string> {
  const modules = new Map<string, string>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    const text = readFileSync(file, 'utf8');
    modules.set(file, text);
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      if (specifier?.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(sourceDirectory, 'index.ts'));
  return modules;
}

describe('@capnode/toolkit root entry', () => {
  it('is a runtime-neutral leaf: no Node built-ins, no other package', () => {
    for (const [file, text] of rootModuleGraph()) {
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        expect(specifier?.startsWith('.'), `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('exports exactly the documented runtime API', () => {
    expect(Object.keys(toolkit).sort()).toEqual([
      'MAX_TIMER_MS',
      'SlotMap',
      'armDeadline',
      'createAsyncStack',
      'createDeadline',
      'defineBrandedErrorClass',
      'defineErrorClass',
      'delay',
      'errorBrandOf',
      'hasErrorBrand',
      'isLoopbackAddress',
      'isLoopbackHost',
      'isLoopbackHostHeader',
      'isPlainObject',
      'isTimeoutError',
      'waitFor',
    ]);
  });
});
