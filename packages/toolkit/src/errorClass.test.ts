import { describe, expect, it } from 'vitest';
import { defineBrandedErrorClass, defineErrorClass, errorBrandOf, hasErrorBrand } from './errorClass.js';

class DemoError extends defineErrorClass('DemoError', ['io', 'closed']) {}

describe('defineErrorClass', () => {
  it('makes an Error with a name, a code, the cause only when given, and the brand', () => {
    const cause = new Error('inner');
    const error = new DemoError('io', 'cannot read x', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(DemoError);
    expect(error.name).toBe('DemoError');
    expect(error.message).toBe('cannot read x');
    expect(error.code).toBe('io');
    expect(error.cause).toBe(cause);
    expect('cause' in new DemoError('closed', 'closed')).toBe(false);
    expect(String(error)).toBe('DemoError: cannot read x');
    expect(error.stack?.split('\n')[0]).toBe('DemoError: cannot read x');
    expect(Object.keys(error)).toEqual(['name', 'code']);
    expect(DemoError.name).toBe('DemoError');
    expect(DemoError.codes).toEqual(['io', 'closed']);
    expect(errorBrandOf(error)).toBe('DemoError');
    expect(errorBrandOf(DemoError.prototype)).toBe('DemoError');
  });

  it('is recognised across copies of the defining module (the registered brand), not by name alone', () => {
    const Copy = defineErrorClass('DemoError', ['io', 'closed']);
    expect(DemoError.is(new Copy('io', 'x'))).toBe(true);
    expect(Copy.is(new DemoError('io', 'x'))).toBe(true);
    expect(DemoError.is(Object.assign(new Error('x'), { name: 'DemoError', code: 'io' }))).toBe(false);
    expect(DemoError.is(new (defineErrorClass('OtherError', ['io']))('io', 'x'))).toBe(false);
    for (const value of [undefined, null, 'DemoError', 1, {}]) expect(DemoError.is(value)).toBe(false);
  });

  it('keeps the brand and the guard in a subclass with its own fields', () => {
    class RichError extends defineErrorClass('RichError', ['failed']) {
      readonly retryable: boolean;
      constructor(message: string, retryable: boolean) {
        super('failed', message);
        this.retryable = retryable;
      }
    }
    const error = new RichError('x', true);
    expect(RichError.is(error)).toBe(true);
    expect(hasErrorBrand(error, 'RichError')).toBe(true);
    expect(error.retryable).toBe(true);
    expect(error.code).toBe('failed');
  });
});

describe('defineBrandedErrorClass', () => {
  it('brands a class with its own constructor shape', () => {
    class WireError extends defineBrandedErrorClass('WireError') {
      readonly code: number;
      constructor(code: number, message: string, options?: { cause?: unknown }) {
        super(message, options);
        this.code = code;
      }
    }
    const error = new WireError(-32601, 'Method not found');
    expect(error.name).toBe('WireError');
    expect(WireError.is(error)).toBe(true);
    expect(errorBrandOf(error)).toBe('WireError');
    expect(errorBrandOf(new Error('plain'))).toBeUndefined();
  });
});
