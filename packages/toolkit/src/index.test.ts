import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/toolkit root entry', () => {
  it('is a runtime-neutral leaf: no Node built-ins, no other package', () => {
    expectImports('index.ts', () => false);
  });

  it('exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'MAX_TIMER_MS',
      'SlotMap',
      'armDeadline',
      'createAsyncStack',
      'createDeadline',
      'defineBrandedErrorClass',
      'defineErrorClass',
      'delay',
      'errorBrandOf',
      'exceedsJsonDepth',
      'hasErrorBrand',
      'isLoopbackAddress',
      'isLoopbackHost',
      'isLoopbackHostHeader',
      'isPlainObject',
      'isTimeoutError',
      'mimeTypeOfName',
      'waitFor',
    ]));
});
