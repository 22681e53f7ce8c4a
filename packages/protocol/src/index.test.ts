import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/protocol root entry', () => {
  it('is runtime-neutral: no Node built-ins and no sibling packages but the leaf toolkit', () => {
    expectImports('index.ts', (specifier) => specifier === '@capnode/toolkit');
  });

  it('exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'JsonRpcErrorCode',
      'MAX_ARGUMENTS_DEPTH',
      'ProtocolError',
      'ProtocolFormatError',
      'STDIO_RELAY_HEADER',
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
    ]));
});

describe('@capnode/protocol/openagent entry', () => {
  it('is runtime-neutral: no Node built-ins, nothing but the leaf toolkit', () => {
    expectImports('openagent.ts', (specifier) => specifier === '@capnode/toolkit');
  });
});
