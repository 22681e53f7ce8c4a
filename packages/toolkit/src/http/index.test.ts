import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as http from './index.js';

const directory = dirname(fileURLToPath(import.meta.url));

describe('@capnode/toolkit/http entry', () => {
  it('loads no module at run time: Node is named by type only, so runtime-neutral entries may import it', () => {
    for (const file of readdirSync(directory).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))) {
      const text = readFileSync(join(directory, file), 'utf8');
      for (const match of text.matchAll(/^(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) {
        const [, , typeOnly, specifier] = match;
        if (specifier?.startsWith('.')) continue;
        expect(typeOnly, `${file} imports ${specifier} at run time`).toBeDefined();
      }
    }
  });

  it('exports exactly the documented runtime API', () => {
    expect(Object.keys(http).sort()).toEqual([
      'AbortLatch',
      'Admission',
      'KernelRequest',
      'createHttpKernel',
      'hookFromSignal',
      'isResponse',
      'jsonReply',
      'jsonRpcErrorReply',
      'listenOn',
      'originOf',
      'readBody',
      'readWebBody',
      'signalFromHook',
      'textReply',
      'toResponse',
      'toWebRequest',
      'writeAnswer',
      'writeStreamedResponse',
    ]);
  });
});
