import { describe, expect, it } from 'vitest';
import { CapabilityError } from '../../errors.js';
import { actSchema, checkBrowserUrl, cutText, refsOf } from './browserArgs.js';

function codeOf(work: () => unknown): { code: string; reason: unknown } | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    if (!(error instanceof CapabilityError)) throw error;
    return { code: error.code, reason: error.data?.reason };
  }
}

describe('checkBrowserUrl', () => {
  it('takes absolute http(s) URLs and about:blank, normalized', () => {
    expect(checkBrowserUrl('http://127.0.0.1:8080/a?b#c')).toBe('http://127.0.0.1:8080/a?b#c');
    expect(checkBrowserUrl(' HTTPS://Example.COM ')).toBe('https://example.com/');
    expect(checkBrowserUrl('about:blank')).toBe('about:blank');
  });

  it('refuses every other scheme and anything not absolute', () => {
    for (const url of ['file:///etc/passwd', 'File:///C:/Windows', 'javascript:alert(1)', 'data:text/html,x', 'blob:http://a/b', 'chrome://settings', 'view-source:http://a/', 'about:config', 'ftp://a/', 'ws://a/']) {
      expect(codeOf(() => checkBrowserUrl(url)), url).toEqual({ code: 'invalid_arguments', reason: 'url_scheme' });
    }
    for (const url of ['/etc/passwd', 'example.com', '', '://x', 'http//x']) expect(codeOf(() => checkBrowserUrl(url)), url).toEqual({ code: 'invalid_arguments', reason: 'invalid_url' });
  });
});

describe('snapshot refs and text cuts', () => {
  it('finds every ref a snapshot names', () => {
    expect([...refsOf('- button "Go" [ref=e2]\n- iframe [ref=e3]:\n  - link "x" [ref=f1e1]\n- text: [ref=bad"]')]).toEqual(['e2', 'e3', 'f1e1']);
  });

  it('cuts at a bound to an exact prefix, never through a surrogate pair', () => {
    expect(cutText('abcdef', 6)).toEqual({ text: 'abcdef', truncated: false });
    expect(cutText('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
    expect(cutText('ab😀cd', 3)).toEqual({ text: 'ab', truncated: true });
  });
});

describe('actSchema', () => {
  it('takes click, type, select, press and hover; refuses other kinds, extra keys and malformed refs', () => {
    expect(actSchema.safeParse({ kind: 'click', ref: 'e1', button: 'right' }).success).toBe(true);
    expect(actSchema.safeParse({ kind: 'type', ref: 'e1', text: 'x', submit: true }).success).toBe(true);
    expect(actSchema.safeParse({ kind: 'select', ref: 'e1', values: ['a'] }).success).toBe(true);
    expect(actSchema.safeParse({ kind: 'press', key: 'Control+A' }).success).toBe(true);
    expect(actSchema.safeParse({ kind: 'evaluate', fn: '() => 1' }).success).toBe(false);
    expect(actSchema.safeParse({ kind: 'click', ref: 'e1', selector: '#x' }).success).toBe(false);
    expect(actSchema.safeParse({ kind: 'click', ref: 'e1]' }).success).toBe(false);
    expect(actSchema.safeParse({ kind: 'select', ref: 'e1', values: [] }).success).toBe(false);
    expect(actSchema.safeParse({ kind: 'press', key: 'a b' }).success).toBe(false);
  });
});
