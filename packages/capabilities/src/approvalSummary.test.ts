import { describe, expect, it } from 'vitest';
import type { PendingApproval } from './approvalBroker.js';
import { argsHashPrefix, formatApprovalSummary } from './approvalSummary.js';

const base: PendingApproval = {
  id: 'abcdefghij',
  createdAt: 0,
  expiresAt: 120_000,
  command: 'system.run',
  commandLine: 'git status',
  argv: ['git', 'status'],
  shell: false,
  cwd: '/repo',
  resolvedPath: '/usr/bin/git',
  env: { GIT_PAGER: 'cat', API_TOKEN: '***' },
  timeoutMs: 30_000,
  transport: 'mcp-http',
  caller: 'claude-code',
  argsHash: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
};

describe('formatApprovalSummary', () => {
  it('shows every field: program and resolved path, argv, shell, cwd, env with masked values, timeout, transport, self-reported caller, hash prefix', () => {
    expect(formatApprovalSummary(base)).toEqual([
      'system.run: git status',
      'program: git → /usr/bin/git',
      'argv: ["git","status"]',
      'shell: no',
      'cwd: /repo',
      'env: GIT_PAGER="cat" API_TOKEN="***"',
      'timeout: 30 s',
      'transport: mcp-http',
      'caller: claude-code (self-reported)',
      'hash: 0123456789ab',
    ]);
    expect(argsHashPrefix(base.argsHash!)).toBe('0123456789ab');
  });

  it('shows a file change\'s diff line by line after the fields, escaped and bounded', () => {
    const change = { id: 'abcdefghij', createdAt: 0, expiresAt: 1, command: 'editor.str_replace', commandLine: 'editor.str_replace {}', diff: '--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\u001b[2J\n' };
    const lines = formatApprovalSummary(change);
    expect(lines.slice(lines.indexOf('diff:'))).toEqual(['diff:', '  --- a/f', '  +++ b/f', '  @@ -1 +1 @@', '  -old', '  +new\\u{001b}[2J']);
    const long = formatApprovalSummary({ ...change, diff: Array.from({ length: 250 }, (_, index) => `+${index}`).join('\n') });
    expect(long.at(-1)).toBe('  … (50 more diff lines)');
    expect(long.length).toBe(long.indexOf('diff:') + 202);
  });

  it('says so when nothing is set, and shows shell lines as such', () => {
    const lines = formatApprovalSummary({ ...base, argv: undefined, shell: true, commandLine: 'ls | wc -l', resolvedPath: undefined, env: undefined, caller: undefined } as never);
    expect(lines).toContain('shell: yes (the line runs in a shell)');
    expect(lines).toContain('env: (none set by the caller)');
    expect(lines).toContain('caller: (unnamed)');
    const { resolvedPath: _unresolved, ...unresolved } = base;
    expect(formatApprovalSummary(unresolved)).toContain('program: git (not resolved)');
  });

  it('escapes control, bidi and zero-width characters in every caller-supplied field', () => {
    const forged = {
      ...base,
      commandLine: 'ls\r\u001b[2Kgit status',
      argv: ['ls\u202e', 'x\u200b'],
      cwd: '/tmp\n/evil',
      env: { 'K\u2066': 'v\u0007' },
      caller: 'claude\r\u001b[1Aroot',
      resolvedPath: '/bin/ls\u061c',
    };
    const text = formatApprovalSummary(forged).join('\n');
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069]/);
    expect(text).toContain('ls\\r\\u{001b}[2Kgit status');
    expect(text).toContain('cwd: /tmp\\n/evil');
    expect(text).toContain('caller: claude\\r\\u{001b}[1Aroot (self-reported)');
    expect(text.split('\n')).toHaveLength(formatApprovalSummary(base).length);
  });

  it('quotes an env key that is not a plain name, so one variable cannot render as several', () => {
    const lines = formatApprovalSummary({ ...base, env: { 'HOME="/home/u" LANG': 'C', 'PATH-x': '1' } });
    expect(lines).toContain('env: "HOME=\\"/home/u\\" LANG"="C" "PATH-x"="1"');
  });

  it('cuts a self-reported caller name that would flood the prompt, saying how long it was', () => {
    const lines = formatApprovalSummary({ ...base, caller: 'x'.repeat(100_000) });
    expect(lines).toContain(`caller: ${'x'.repeat(120)}… (100000 characters) (self-reported)`);
  });
});
