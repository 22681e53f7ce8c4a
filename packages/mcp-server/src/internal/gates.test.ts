import { describe, expect, it } from 'vitest';
// The loopback peer, listen-host and Host-header checks are the toolkit's (tested there).
import { bearerCredential, browserHeader, canonicalPath, createBearerCheck, createBearerTable, createTokenCompare } from './gates.js';

describe('browser gate', () => {
  it('flags Origin, Referer and fetch-metadata headers a browser sends', () => {
    expect(browserHeader({ origin: 'null' })).toBe('origin');
    expect(browserHeader({ referer: 'x' })).toBe('referer');
    expect(browserHeader({ 'sec-fetch-site': 'none' })).toBe('sec-fetch-site');
    expect(browserHeader({ 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site' })).toBe('sec-fetch-site');
    expect(browserHeader({ 'sec-fetch-mode': 'navigate' })).toBe('sec-fetch-mode');
    expect(browserHeader({ 'sec-fetch-dest': 'document' })).toBe('sec-fetch-dest');
  });
  it("lets Node fetch's lone Sec-Fetch-Mode: cors through", () => {
    expect(browserHeader({ 'sec-fetch-mode': 'cors', 'user-agent': 'node' })).toBeUndefined();
    expect(browserHeader({})).toBeUndefined();
  });
});

describe('bearer gate', () => {
  const check = createBearerCheck('s3cret-token');
  it('accepts the token with a case-insensitive scheme and surrounding whitespace', () => {
    for (const value of ['Bearer s3cret-token', 'bearer s3cret-token', 'BEARER   s3cret-token ', ' Bearer s3cret-token']) expect(check(value)).toBe(true);
  });
  it('refuses anything else', () => {
    for (const value of [undefined, '', 'Bearer', 'Bearer ', 'Basic s3cret-token', 'Bearer s3cret-token2', 'Bearer s3cret-toke', 'Bearer a b', 's3cret-token']) {
      expect(check(value)).toBe(false);
    }
  });
});

describe('named bearer table', () => {
  const lookup = createBearerTable([
    { name: 'default', token: 'a'.repeat(43) },
    { name: 'claude', token: 'b'.repeat(43) },
    { name: 'short', token: 'tök' },
  ]);
  it("names the token the header carries, over every length in use", () => {
    expect(lookup(`Bearer ${'a'.repeat(43)}`)).toBe('default');
    expect(lookup(`bearer ${'b'.repeat(43)} `)).toBe('claude');
    expect(lookup('Bearer tök')).toBe('short');
  });
  it('names nothing for any other header', () => {
    for (const value of [undefined, '', 'Bearer', `Basic ${'a'.repeat(43)}`, `Bearer ${'c'.repeat(43)}`, `Bearer ${'a'.repeat(42)}`, 'Bearer tok']) expect(lookup(value)).toBeUndefined();
  });
});

describe('token compare', () => {
  it('matches the secret only, over its UTF-8 bytes, and reuses nothing between calls', () => {
    const matches = createTokenCompare('tök-3n');
    expect(matches('tök-3n')).toBe(true);
    expect(matches('tok-3n')).toBe(false);
    expect(matches('tök-3nn')).toBe(false);
    expect(matches('tök-3')).toBe(false);
    expect(matches('tök-3m')).toBe(false);
    expect(matches('tök-3n')).toBe(true);
    expect(matches('')).toBe(false);
  });
});

describe('request target gate', () => {
  it.each([
    ['/', '/'],
    ['/?a=b', '/'],
    ['/mcp', '/mcp'],
    ['/_capnode/status', '/_capnode/status'],
    ['/_capnode/status/', '/_capnode/status/'],
    ['/_capnode/status?x=/../%2e', '/_capnode/status'],
    ['/a.b/c', '/a.b/c'],
    ['/.well-known/x', '/.well-known/x'],
  ])('keeps the canonical target %s as path %s', (target, path) => {
    expect(canonicalPath(target)).toBe(path);
  });
  it.each([
    undefined,
    '',
    '*',
    'http://127.0.0.1/_capnode/status',
    '_capnode',
    '//_capnode',
    '/a//b',
    '/.',
    '/..',
    '/x/../_capnode',
    '/x/./y',
    '/x/.',
    '/x.',
    '/x./y',
    '/%2e%2e/x',
    '/a%2fb',
    '/%5fcapnode',
    '/a\\b',
    '/a#b',
    '/a b',
    '/a\u00e4',
    '/a\u007f',
  ])('refuses %j', (target) => {
    expect(canonicalPath(target)).toBeUndefined();
  });
});

describe('bearerCredential', () => {
  const pattern = (value: string): string | undefined => {
    const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(value);
    return match !== null && match[1]!.toLowerCase() === 'bearer' ? match[2] : undefined;
  };

  it('reads the credential exactly as the full header pattern does', () => {
    const spaces = [' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u1680'];
    const values = ['Bearer abc', 'Bearer ', 'Bearer', 'bearer abc', 'BEARER abc', 'Bearer  abc', 'Bearer abc ', ' Bearer abc', 'Bearer a b', 'Basic abc', 'Bearerabc', 'Bearer tök', 'Bearer ab\u00e9c'];
    for (const space of spaces) values.push(`Bearer a${space}`, `Bearer${space}abc`, `Bearer a${space}b`, `Bearer ${space}abc`);
    for (const value of values) expect(bearerCredential(value), JSON.stringify(value)).toBe(pattern(value));
    expect(bearerCredential(undefined)).toBeUndefined();
  });
});
