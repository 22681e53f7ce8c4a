import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as protocol from './index.js';

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

describe('@capnode/protocol root entry', () => {
  it('is runtime-neutral: no Node built-ins and no sibling packages but the leaf toolkit', () => {
    const graph = rootModuleGraph();
    expect(graph.size).toBeGreaterThan(5);
    for (const [file, text] of graph) {
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
      for (const specifier of specifiers) {
        expect(specifier.startsWith('.') || specifier === '@capnode/toolkit', `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('exports exactly the documented runtime API', () => {
    expect(Object.keys(protocol).sort()).toEqual([
      'JsonRpcErrorCode',
      'MAX_ARGUMENTS_DEPTH',
      'ProtocolError',
      'ProtocolFormatError',
      'argumentsHash',
      'canonicalJson',
      'createCancellationTracker',
      'exceedsJsonDepth',
      'extractRequestIdRaw',
      'findRequestIdToken',
      'isJsonNumberLexeme',
      'isProtocolError',
      'isProtocolFormatError',
      'isRequestId',
      'needsRawNumber',
      'normalizeJsonNumber',
      'requestIdKey',
      'requestIdKeyFromMessage',
    ]);
  });
});
