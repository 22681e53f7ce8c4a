// Every input of the exec policy attacked as a caller would, against the pure policy functions:
// env keys and values, cwd spellings and scope prefixes, program spellings, pattern quoting.
import { describe, expect, it } from 'vitest';
import { allowlistEntryCovers, describeExecArgs, evaluateExecPolicy, isInsideCwdScope, matchesExecPattern, parseExecPattern } from '@capnode/capabilities';

const linux = { platform: 'linux' };
const win = { platform: 'win32' };

describe('exec policy inputs', () => {
  it('env: case variants and lookalikes of code-loading keys never pass as uncovered', () => {
    for (const key of ['Path', 'path', 'ld_preload', 'Ld_Preload', 'git_config_count', 'Node_Options', 'bash_func_x%%']) {
      expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['git status'] }, { argv: ['git', 'status'], env: { [key]: '/x' } }, linux)).toMatchObject({ verdict: 'deny', reason: 'code_env' });
      expect(evaluateExecPolicy({ mode: 'full', allowlist: [] }, { argv: ['git', 'status'], env: { [key]: '' } }, win)).toMatchObject({ verdict: 'ask' });
    }
    // A lookalike (Cyrillic А) is another variable: not code-loading, but still not covered by a bare entry.
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['git status'] }, { argv: ['git', 'status'], env: { 'P\u0410TH': '/x' } }, linux)).toMatchObject({ verdict: 'deny', reason: 'not_allowlisted' });
  });

  it('env: keys with = or NUL and values with NUL are refused before anyone is asked', () => {
    for (const env of [{ 'A=B': '1' }, { 'A\0B': '1' }, { '': '1' }, { A: 'x\0y' }]) expect(() => describeExecArgs({ command: ['ls'], env })).toThrow(/env/);
    expect(() => describeExecArgs({ command: ['ls'], env: { A: 1 } })).toThrow(/string values/);
    expect(() => describeExecArgs({ command: ['ls'], env: ['A=1'] })).toThrow(/string values/);
  });

  it('env: a recorded entry plus one extra key is not covered; {} is no env; shell lines with env are never covered', () => {
    const entry = { pattern: 'make', cwd: '/home/u/app', env: { CC: 'gcc' } };
    expect(allowlistEntryCovers(entry, { argv: ['make'], cwd: '/home/u/app', env: { CC: 'gcc' } }, linux)).toBe(true);
    expect(allowlistEntryCovers(entry, { argv: ['make'], cwd: '/home/u/app', env: { CC: 'gcc', X: '1' } }, linux)).toBe(false);
    expect(allowlistEntryCovers(entry, { argv: ['make'], cwd: '/home/u/app', env: { CC: 'clang' } }, linux)).toBe(false);
    expect(allowlistEntryCovers(entry, { argv: ['make'], cwd: '/home/u/app', env: { cc: 'gcc' } }, linux)).toBe(false);
    expect(allowlistEntryCovers('ls', { argv: ['ls'], env: {} }, linux)).toBe(true);
    expect(describeExecArgs({ command: ['ls'], env: {} }).env).toBeUndefined();
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['sh *', { pattern: 'sh *', env: { A: '1' } }] }, { argv: [], shell: true, env: { A: '1' } }, linux)).toMatchObject({ verdict: 'deny', reason: 'shell' });
  });

  it('cwd: scope prefixes, relative paths, ~, dot segments, trailing and double slashes', () => {
    expect(isInsideCwdScope('/home/u/app-evil', '/home/u/app', linux)).toBe(false);
    expect(isInsideCwdScope('/home/u/appx/y', '/home/u/app', linux)).toBe(false);
    expect(isInsideCwdScope('/home/u/app/sub', '/home/u/app/', linux)).toBe(true);
    expect(isInsideCwdScope('/home/u/app/', '/home/u/app', linux)).toBe(true);
    expect(isInsideCwdScope('/home/u//app', '/home/u/app', linux)).toBe(true);
    for (const cwd of ['app', '~/app', '~', '/home/u/app/../evil', '/home/u/app/./x', '/home/u/app/..', '/home/u/app\0/x', './app']) expect(isInsideCwdScope(cwd, '/home/u/app', linux), cwd).toBe(false);
    // POSIX is case-sensitive; Windows is not, and never lets C:\app cover C:\app-evil.
    expect(isInsideCwdScope('/home/u/APP', '/home/u/app', linux)).toBe(false);
    expect(isInsideCwdScope('c:\\APP\\x', 'C:\\app', win)).toBe(true);
    expect(isInsideCwdScope('C:\\app-evil', 'C:\\app', win)).toBe(false);
    expect(isInsideCwdScope('D:\\app', 'C:\\app', win)).toBe(false);
    // An entry without cwd never covers a call with one, and one with cwd never a call without.
    expect(allowlistEntryCovers('ls', { argv: ['ls'], cwd: '/home/u' }, linux)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'ls', cwd: '/home/u' }, { argv: ['ls'] }, linux)).toBe(false);
  });

  it('program: ./git, git/../git, .exe on POSIX, a bare pattern never matches a path', () => {
    for (const argv0 of ['./git', 'git/../git', '/tmp/git', 'bin/git', 'git.exe', 'GIT', 'git ']) {
      // Path spellings never match a bare pattern, even when they resolve to the same file.
      const resolvedPath = /\//.test(argv0) ? '/usr/bin/git' : undefined;
      expect(matchesExecPattern('git status', { argv: [argv0, 'status'], ...(resolvedPath ? { resolvedPath } : {}) }, linux), argv0).toBe(false);
    }
    expect(matchesExecPattern('git status', { argv: ['git', 'status'], resolvedPath: '/usr/bin/git' }, linux)).toBe(true);
    // On Windows `.\\git` is a path too.
    expect(matchesExecPattern('git status', { argv: ['.\\git', 'status'] }, win)).toBe(false);
    expect(matchesExecPattern('git status', { argv: ['GIT.EXE', 'status'] }, win)).toBe(true);
    // A path pattern matches the resolved path, not the spelling.
    expect(matchesExecPattern('/usr/bin/git status', { argv: ['/tmp/evil/git', 'status'], resolvedPath: '/tmp/evil/git' }, linux)).toBe(false);
  });

  it('argv: spaces and quotes in argv[0], newlines, --, quoted and escaped stars in patterns', () => {
    expect(matchesExecPattern("'my tool' --x", { argv: ['my tool', '--x'] }, linux)).toBe(true);
    expect(matchesExecPattern('git status', { argv: ['git', 'status\n'] }, linux)).toBe(false);
    expect(matchesExecPattern('git status', { argv: ['git', 'status', '--'] }, linux)).toBe(false);
    expect(matchesExecPattern('echo \\*', { argv: ['echo', 'x'] }, linux)).toBe(false);
    expect(matchesExecPattern("echo '*'", { argv: ['echo', '*'] }, linux)).toBe(true);
    expect(matchesExecPattern('echo "*"', { argv: ['echo', 'anything'] }, linux)).toBe(false);
    expect(matchesExecPattern('git status*', { argv: ['git', 'statusx'] }, linux)).toBe(false);
    expect(matchesExecPattern('git "status"*', { argv: ['git', 'statusx'] }, linux)).toBe(false);
    expect(() => parseExecPattern('git st*tus')).toThrow(/not supported/);
    expect(() => parseExecPattern('g*t')).toThrow(/program/);
    expect(matchesExecPattern('ls *', { argv: ['ls', ...Array.from({ length: 4096 }, () => 'x'.repeat(100))] }, linux)).toBe(true);
  });
});
