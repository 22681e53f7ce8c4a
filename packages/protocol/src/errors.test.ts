import { defineBrandedErrorClass, defineErrorClass } from '@capnode/toolkit';
import { describe, expect, it } from 'vitest';
import { isProtocolError, isProtocolFormatError, JsonRpcErrorCode, ProtocolError, ProtocolFormatError } from './errors.js';

describe('ProtocolError', () => {
  it('carries code, message and data, and becomes a JSON-RPC error object', () => {
    const error = new ProtocolError(JsonRpcErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version: 2099-01-01', {
      supported: ['2025-06-18'],
      requested: '2099-01-01',
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ProtocolError');
    expect(error.toJsonRpcError()).toEqual({
      code: -32022,
      message: 'Unsupported protocol version: 2099-01-01',
      data: { supported: ['2025-06-18'], requested: '2099-01-01' },
    });
  });

  it('omits absent data and never exposes its cause or stack', () => {
    const error = new ProtocolError(JsonRpcErrorCode.InternalError, 'Internal error', undefined, { cause: new Error('secret path /home/x') });
    const wire = error.toJsonRpcError();
    expect(wire).toEqual({ code: -32603, message: 'Internal error' });
    expect(Object.keys(wire)).toEqual(['code', 'message']);
    expect(JSON.stringify(wire)).not.toContain('secret');
    expect(error.cause).toBeInstanceOf(Error);
    expect(new ProtocolError(-32600, 'Invalid Request', null).toJsonRpcError()).toEqual({ code: -32600, message: 'Invalid Request', data: null });
  });

  it('requires an integer code', () => {
    expect(() => new ProtocolError(1.5, 'x')).toThrow(/must be an integer/);
    expect(() => new ProtocolError(Number.NaN, 'x')).toThrow(TypeError);
  });

  it('names the standard JSON-RPC and MCP codes', () => {
    expect(JsonRpcErrorCode).toEqual({
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      ServerError: -32000,
      SessionNotFound: -32001,
      ResourceNotFound: -32002,
      HeaderMismatch: -32020,
      MissingRequiredClientCapability: -32021,
      UnsupportedProtocolVersion: -32022,
      UrlElicitationRequired: -32042,
    });
  });

  it('is recognised across package copies, but not an unrelated error of the same name', () => {
    expect(isProtocolError(new ProtocolError(-32601, 'Method not found'))).toBe(true);
    // Another copy of this package (a second bundle) brands its class the same way.
    const Copy = defineBrandedErrorClass('ProtocolError');
    expect(isProtocolError(new Copy('x'))).toBe(true);
    const sdkLike = Object.assign(new Error('x'), { name: 'ProtocolError', code: -32601, toJsonRpcError: () => ({ code: -32601, message: 'x' }) });
    expect(isProtocolError(sdkLike)).toBe(false);
    expect(isProtocolError({ name: 'ProtocolError', code: -32601 })).toBe(false);
    expect(isProtocolError(new Error('x'))).toBe(false);
  });
});

describe('ProtocolFormatError', () => {
  it('has a string code and keeps its cause', () => {
    const cause = new Error('inner');
    const error = new ProtocolFormatError('cyclic_value', 'Cannot canonicalize a cyclic reference at $.a', { cause });
    expect(error.name).toBe('ProtocolFormatError');
    expect(error.code).toBe('cyclic_value');
    expect(error.cause).toBe(cause);
    expect(isProtocolFormatError(error)).toBe(true);
    expect(isProtocolFormatError(new (defineErrorClass('ProtocolFormatError', ['too_deep']))('too_deep', 'x'))).toBe(true);
    expect(isProtocolFormatError(Object.assign(new Error('x'), { name: 'ProtocolFormatError', code: 'too_deep' }))).toBe(false);
    expect(isProtocolFormatError(new ProtocolError(-32600, 'x'))).toBe(false);
  });
});
