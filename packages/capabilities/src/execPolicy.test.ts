import { describe, expect, it } from 'vitest';
import {
  createMemoryExecApprovalStore,
  DEFAULT_EXEC_APPROVAL_POLICY,
  evaluateExecPolicy,
  matchesExecPattern,
  parseExecApprovalPolicy,
  parseExecPattern,
  patternForTarget,
  type ExecApprovalPolicy,
  type ExecTarget,
} from './execPolicy.js';

const posix = { platform: 'linux' };
const windows = { platform: 'win32' };
const target = (argv: string[], resolvedPath?: string): ExecTarget => (resolvedPath === undefined ? { argv } : { argv, resolvedPath });

describe('parseExecPattern', () => {
  it('splits program and argument glob', () => {
    expect(parseExecPattern('git status*')).toEqual({ source: 'git status*', executable: 'git', isPath: false, args: ['status', ''] });
    expect(parseExecPattern('  /usr/bin/ls  ')).toEqual({ source: '/usr/bin/ls', executable: '/usr/bin/ls', isPath: true, args: undefined });
    expect(parseExecPattern('"C:\\Program Files\\Git\\git.exe" log *')).toMatchObject({ executable: 'C:\\Program Files\\Git\\git.exe', isPath: true, args: ['log ', ''] });
    expect(parseExecPattern('echo a\\*b')).toMatchObject({ args: ['a*b'] });
  });

  it.each([
    ['', /empty/],
    ['*', /cannot contain '\*'/],
    ['gi* status', /cannot contain '\*'/],
    ['"unterminated', /closing quote/],
    ['"a"b', /followed by a space/],
    ['a"b" c', /quote the whole program/],
    ['x'.repeat(1025), /longer than 1024/],
  ])('rejects %j', (pattern, message) => {
    expect(() => parseExecPattern(pattern)).toThrow(message);
  });
});

describe('matchesExecPattern', () => {
  it('matches the argument glob against the normalized arguments', () => {
    expect(matchesExecPattern('git status*', target(['git', 'status']), posix)).toBe(true);
    expect(matchesExecPattern('git status*', target(['git', 'status', '--short']), posix)).toBe(true);
    expect(matchesExecPattern('git status*', target(['git', 'push']), posix)).toBe(false);
    expect(matchesExecPattern('git status*', target(['git']), posix)).toBe(false);
    expect(matchesExecPattern('npm *', target(['npm']), posix)).toBe(true);
    expect(matchesExecPattern('npm *', target(['npm', 'run', 'build']), posix)).toBe(true);
    expect(matchesExecPattern('git commit -m *', target(['git', 'commit', '-m', 'fix the bug']), posix)).toBe(true);
    expect(matchesExecPattern('git * --dry-run', target(['git', 'push', 'origin', '--dry-run']), posix)).toBe(true);
    expect(matchesExecPattern('git * --dry-run', target(['git', 'push', '--dry-run', '--force']), posix)).toBe(false);
    expect(matchesExecPattern('a *b*c', target(['a', 'xbc']), posix)).toBe(true);
    expect(matchesExecPattern('a *b*c', target(['a', 'xcb']), posix)).toBe(false);
    expect(matchesExecPattern('a ab*ba', target(['a', 'aba']), posix)).toBe(false);
  });

  it('allows a program without arguments only without arguments', () => {
    expect(matchesExecPattern('ls', target(['ls']), posix)).toBe(true);
    expect(matchesExecPattern('ls', target(['ls', '-la']), posix)).toBe(false);
  });

  it('treats regex characters literally', () => {
    expect(matchesExecPattern('echo a.b', target(['echo', 'axb']), posix)).toBe(false);
    expect(matchesExecPattern('echo (a|b)+', target(['echo', '(a|b)+']), posix)).toBe(true);
    expect(matchesExecPattern('echo \\*', target(['echo', '*']), posix)).toBe(true);
    expect(matchesExecPattern('echo \\*', target(['echo', 'x']), posix)).toBe(false);
  });

  it('matches bare names only for programs found through PATH', () => {
    expect(matchesExecPattern('git status', target(['git', 'status'], '/usr/bin/git'), posix)).toBe(true);
    expect(matchesExecPattern('git status', target(['./git', 'status'], '/tmp/evil/git'), posix)).toBe(false);
    expect(matchesExecPattern('git status', target(['/usr/bin/git', 'status']), posix)).toBe(false);
  });

  it('matches path patterns against the resolved path', () => {
    expect(matchesExecPattern('/usr/bin/ls', target(['ls'], '/usr/bin/ls'), posix)).toBe(true);
    expect(matchesExecPattern('/usr/bin/ls', target(['/usr/bin/ls']), posix)).toBe(true);
    expect(matchesExecPattern('/usr/bin/ls', target(['ls']), posix)).toBe(false);
    expect(matchesExecPattern('/usr/bin/ls', target(['ls'], '/usr/local/bin/ls'), posix)).toBe(false);
    expect(matchesExecPattern('/usr/bin/ls *', target(['../../usr/bin/ls', '-l'], '/usr/bin/ls'), posix)).toBe(true);
  });

  it('compares case-sensitively on POSIX and case-insensitively with optional extensions on Windows', () => {
    expect(matchesExecPattern('Git', target(['git']), posix)).toBe(false);
    expect(matchesExecPattern('git', target(['GIT.EXE'], 'C:\\Git\\cmd\\GIT.EXE'), windows)).toBe(true);
    expect(matchesExecPattern('git.exe', target(['git'], 'C:\\Git\\cmd\\git.exe'), windows)).toBe(true);
    expect(matchesExecPattern('C:/Git/cmd/git', target(['git'], 'C:\\Git\\cmd\\git.exe'), windows)).toBe(true);
    expect(matchesExecPattern('git', target(['.\\git'], 'C:\\work\\git.exe'), windows)).toBe(false);
    expect(matchesExecPattern('git', target(['git'], 'C:\\Git\\cmd\\git.ps1'), windows)).toBe(false);
  });

  it('never matches shell command lines', () => {
    expect(matchesExecPattern('git status*', { argv: ['git', 'status'], shell: true }, posix)).toBe(false);
  });
});

describe('patternForTarget', () => {
  it('gives a pattern that matches exactly the same command again', () => {
    const cases: ExecTarget[] = [
      target(['git', 'status']),
      target(['ls']),
      target(['rm', '*']),
      target(['echo', 'a\\*', 'x y', '']),
      target(['./build.sh', '--fast'], '/home/me/project/build.sh'),
      target(['/opt/My Tools/run', 'a'], '/opt/My Tools/run'),
    ];
    for (const item of cases) {
      const pattern = patternForTarget(item, posix)!;
      expect(matchesExecPattern(pattern, item, posix), pattern).toBe(true);
    }
    expect(patternForTarget(target(['git', 'status']), posix)).toBe('git status');
    expect(patternForTarget(target(['./build.sh', '--fast'], '/home/me/project/build.sh'), posix)).toBe('/home/me/project/build.sh --fast');
  });

  it('does not widen literal stars into globs', () => {
    const pattern = patternForTarget(target(['rm', '*']), posix)!;
    expect(pattern).toBe('rm \\*');
    expect(matchesExecPattern(pattern, target(['rm', 'important.txt']), posix)).toBe(false);
  });

  it('gives nothing for shell command lines', () => {
    expect(patternForTarget({ argv: [], shell: true })).toBeUndefined();
  });
});

describe('evaluateExecPolicy', () => {
  const policy = (mode: ExecApprovalPolicy['mode'], allowlist: string[] = ['git status*']): ExecApprovalPolicy => ({ mode, allowlist });
  const listed = target(['git', 'status']);
  const other = target(['rm', '-rf', '/tmp/x']);
  const shell = { argv: [], shell: true };

  it('applies every mode', () => {
    expect(evaluateExecPolicy(policy('full'), other, posix)).toEqual({ verdict: 'allow', reason: 'full' });
    expect(evaluateExecPolicy(policy('full'), shell, posix)).toEqual({ verdict: 'allow', reason: 'full' });
    expect(evaluateExecPolicy(policy('deny'), listed, posix)).toEqual({ verdict: 'deny', reason: 'deny' });
    expect(evaluateExecPolicy(policy('allowlist'), listed, posix)).toEqual({ verdict: 'allow', reason: 'allowlist', pattern: 'git status*' });
    expect(evaluateExecPolicy(policy('allowlist'), other, posix)).toEqual({ verdict: 'deny', reason: 'not_allowlisted' });
    expect(evaluateExecPolicy(policy('allowlist'), shell, posix)).toEqual({ verdict: 'deny', reason: 'shell' });
    expect(evaluateExecPolicy(policy('ask'), listed, posix)).toEqual({ verdict: 'allow', reason: 'allowlist', pattern: 'git status*' });
    expect(evaluateExecPolicy(policy('ask'), other, posix)).toEqual({ verdict: 'ask' });
    expect(evaluateExecPolicy(policy('ask', ['sh *']), shell, posix)).toEqual({ verdict: 'ask' });
  });

  it('skips invalid stored patterns instead of matching them', () => {
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['*', 'git status*'] }, listed, posix)).toMatchObject({ verdict: 'allow' });
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['*'] }, other, posix)).toMatchObject({ verdict: 'deny' });
  });
});

describe('policy schema and memory store', () => {
  it('fills defaults: mode ask, empty allowlist', () => {
    expect(parseExecApprovalPolicy(undefined)).toEqual({ mode: 'ask', allowlist: [] });
    expect(parseExecApprovalPolicy({})).toEqual(DEFAULT_EXEC_APPROVAL_POLICY);
    expect(parseExecApprovalPolicy({ mode: 'full', allowlist: ['  npm *  '] })).toEqual({ mode: 'full', allowlist: ['npm *'] });
  });

  it('rejects unknown modes and invalid patterns with a clear message', () => {
    expect(() => parseExecApprovalPolicy({ mode: 'yolo' })).toThrow(/Invalid exec approval policy: mode: /);
    expect(() => parseExecApprovalPolicy({ allowlist: ['*'] })).toThrow(/allowlist\.0: .*cannot contain/);
  });

  it('stores copies and validates on set', async () => {
    const store = createMemoryExecApprovalStore({ allowlist: ['ls'] });
    const first = await store.get();
    expect(first).toEqual({ mode: 'ask', allowlist: ['ls'] });
    (first.allowlist as string[]).push('rm *');
    expect((await store.get()).allowlist).toEqual(['ls']);
    await store.set({ mode: 'allowlist', allowlist: ['git *'] });
    expect(await store.get()).toEqual({ mode: 'allowlist', allowlist: ['git *'] });
    await expect(store.set({ mode: 'nope' as 'ask', allowlist: [] })).rejects.toThrow(/Invalid exec approval policy/);
    expect((await store.get()).mode).toBe('allowlist');
  });
});
