import { describe, expect, it } from 'vitest';
import {
  allowlistEntryCovers,
  createMemoryExecApprovalStore,
  entryForTarget,
  isInsideCwdScope,
  DEFAULT_EXEC_APPROVAL_POLICY,
  evaluateExecPolicy,
  matchesExecPattern,
  parseExecApprovalPolicy,
  parseExecPattern,
  patternForTarget,
  updateExecApprovalPolicy,
  type ExecApprovalPolicy,
  type ExecTarget,
} from './execPolicy.js';

const posix = { platform: 'linux' };
const windows = { platform: 'win32' };
const target = (argv: string[], resolvedPath?: string): ExecTarget => (resolvedPath === undefined ? { argv } : { argv, resolvedPath });
const literal = (value: string) => ({ kind: 'literal', value });

describe('parseExecPattern', () => {
  it('tokenises like a command line: program, then one matcher per argument', () => {
    expect(parseExecPattern('  /usr/bin/ls  ')).toEqual({ source: '/usr/bin/ls', executable: '/usr/bin/ls', isPath: true, args: [], rest: false });
    expect(parseExecPattern(`git commit -m 'fix: a b'`)).toMatchObject({
      executable: 'git',
      isPath: false,
      args: [literal('commit'), literal('-m'), literal('fix: a b')],
      rest: false,
    });
    expect(parseExecPattern(`"C:\\Program Files\\Git\\git.exe" log *`)).toMatchObject({ executable: 'C:\\Program Files\\Git\\git.exe', isPath: true, args: [literal('log')], rest: true });
  });

  it('reads a whole * token as one argument in the middle and as any further arguments at the end', () => {
    expect(parseExecPattern('git * --dry-run')).toMatchObject({ args: [{ kind: 'any' }, literal('--dry-run')], rest: false });
    expect(parseExecPattern('npm *')).toMatchObject({ args: [], rest: true });
    expect(parseExecPattern('git * *')).toMatchObject({ args: [{ kind: 'any' }], rest: true });
  });

  it('reads \\*, quoted stars and stars inside quotes literally', () => {
    expect(parseExecPattern('echo a\\*b')).toMatchObject({ args: [literal('a*b')], rest: false });
    expect(parseExecPattern(`echo '*' "*" \\*`)).toMatchObject({ args: [literal('*'), literal('*'), literal('*')], rest: false });
    expect(parseExecPattern(`find . -name '*.ts'`)).toMatchObject({ args: [literal('.'), literal('-name'), literal('*.ts')], rest: false });
  });

  it('reads the legacy last token word* as word followed by *', () => {
    expect(parseExecPattern('git status*')).toEqual({ source: 'git status*', executable: 'git', isPath: false, args: [literal('status')], rest: true });
    expect(parseExecPattern('echo a\\**')).toMatchObject({ args: [literal('a*')], rest: true });
  });

  it.each([
    ['', /empty/],
    ['*', /cannot contain '\*'/],
    ['gi* status', /cannot contain '\*'/],
    ['"unterminated', /unterminated double quote/],
    ["git 'open", /unterminated single quote/],
    ['git status; touch x', /shell syntax \(';'\)/],
    ['git status | sh', /shell syntax/],
    ['git st*tus', /'\*' inside the argument 'st\*tus' is not supported/],
    ['git status* --short', /'\*' inside the argument 'status\*'/],
    ['find -name *.ts', /'\*' inside the argument '\*\.ts'/],
    ['a *b*c', /'\*' inside the argument/],
    ['x'.repeat(1025), /longer than 1024/],
  ])('rejects %j', (pattern, message) => {
    expect(() => parseExecPattern(pattern)).toThrow(message);
  });
});

describe('matchesExecPattern', () => {
  it('matches every further token against exactly one argument, literally', () => {
    expect(matchesExecPattern('git status', target(['git', 'status']), posix)).toBe(true);
    expect(matchesExecPattern('git status', target(['git', 'status', '--short']), posix)).toBe(false);
    expect(matchesExecPattern('git status', target(['git', 'statusx']), posix)).toBe(false);
    expect(matchesExecPattern('git status', target(['git']), posix)).toBe(false);
    expect(matchesExecPattern(`git commit -m 'a b'`, target(['git', 'commit', '-m', 'a b']), posix)).toBe(true);
    expect(matchesExecPattern(`git commit -m 'a b'`, target(['git', 'commit', '-m a', 'b']), posix)).toBe(false);
  });

  it('the last * matches zero or more further arguments', () => {
    expect(matchesExecPattern('npm *', target(['npm']), posix)).toBe(true);
    expect(matchesExecPattern('npm *', target(['npm', 'run', 'build']), posix)).toBe(true);
    expect(matchesExecPattern('git status *', target(['git', 'status']), posix)).toBe(true);
    expect(matchesExecPattern('git status *', target(['git', 'status', '--short']), posix)).toBe(true);
    expect(matchesExecPattern('git status *', target(['git', 'statusx']), posix)).toBe(false);
    expect(matchesExecPattern('git status *', target(['git', 'push']), posix)).toBe(false);
  });

  it('a middle * matches exactly one argument', () => {
    expect(matchesExecPattern('git * --dry-run', target(['git', 'push', '--dry-run']), posix)).toBe(true);
    expect(matchesExecPattern('git * --dry-run', target(['git', 'push', 'origin', '--dry-run']), posix)).toBe(false);
    expect(matchesExecPattern('git * --dry-run', target(['git', '--dry-run']), posix)).toBe(false);
    expect(matchesExecPattern('git * --dry-run', target(['git', 'push', '--dry-run', '--force']), posix)).toBe(false);
  });

  it('the legacy git status* covers git status and git status --short, never git statusx', () => {
    expect(matchesExecPattern('git status*', target(['git', 'status']), posix)).toBe(true);
    expect(matchesExecPattern('git status*', target(['git', 'status', '--short']), posix)).toBe(true);
    expect(matchesExecPattern('git status*', target(['git', 'statusx']), posix)).toBe(false);
    expect(matchesExecPattern('git status*', target(['git', 'status;', 'touch', 'x']), posix)).toBe(false);
    expect(matchesExecPattern('git status*', target(['git', 'status; touch x']), posix)).toBe(false);
    expect(matchesExecPattern('git status*', target(['git']), posix)).toBe(false);
  });

  it('allows a program without arguments only without arguments', () => {
    expect(matchesExecPattern('ls', target(['ls']), posix)).toBe(true);
    expect(matchesExecPattern('ls', target(['ls', '-la']), posix)).toBe(false);
    expect(matchesExecPattern('ls', target(['ls', '']), posix)).toBe(false);
  });

  it('treats regex characters and escaped stars literally', () => {
    expect(matchesExecPattern('echo a.b', target(['echo', 'axb']), posix)).toBe(false);
    expect(matchesExecPattern(`echo '(a|b)+'`, target(['echo', '(a|b)+']), posix)).toBe(true);
    expect(matchesExecPattern('echo \\*', target(['echo', '*']), posix)).toBe(true);
    expect(matchesExecPattern('echo \\*', target(['echo', 'x']), posix)).toBe(false);
    expect(matchesExecPattern(`find . -name '*.ts'`, target(['find', '.', '-name', 'a.ts']), posix)).toBe(false);
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
      target(['echo', "it's", 'a\\', '"q"', '$HOME', 'a;b', '|', '* x', '\t']),
    ];
    for (const item of cases) {
      const pattern = patternForTarget(item, posix)!;
      expect(matchesExecPattern(pattern, item, posix), pattern).toBe(true);
      expect(matchesExecPattern(pattern, { ...item, argv: [...item.argv, 'extra'] }, posix), pattern).toBe(false);
    }
    expect(patternForTarget(target(['git', 'status']), posix)).toBe('git status');
    expect(patternForTarget(target(['./build.sh', '--fast'], '/home/me/project/build.sh'), posix)).toBe('/home/me/project/build.sh --fast');
  });

  it('does not widen literal stars into globs', () => {
    const pattern = patternForTarget(target(['rm', '*']), posix)!;
    expect(pattern).toBe(`rm '*'`);
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
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['*', 'git st*tus', 'git status*'] }, listed, posix)).toMatchObject({ verdict: 'allow' });
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['*'] }, other, posix)).toMatchObject({ verdict: 'deny' });
  });

  it('applies a memory store update to the policy current at that moment', async () => {
    const store = createMemoryExecApprovalStore({ allowlist: ['ls'] });
    await store.set({ mode: 'deny', allowlist: ['ls'] });
    await updateExecApprovalPolicy(store, (current) => ({ ...current, allowlist: [...current.allowlist, 'pwd'] }));
    expect(await store.get()).toEqual({ mode: 'deny', allowlist: ['ls', 'pwd'] });
  });
});

describe('allowlist entry scope', () => {
  const git = (cwd?: string, env?: Record<string, string>): ExecTarget => ({ argv: ['git', 'status'], resolvedPath: '/usr/bin/git', ...(cwd ? { cwd } : {}), ...(env ? { env } : {}) });

  it('an entry without cwd covers only calls that give no cwd', () => {
    expect(allowlistEntryCovers('git status', git(), posix)).toBe(true);
    expect(allowlistEntryCovers('git status', git('/home/me'), posix)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'git status' }, git('/tmp'), posix)).toBe(false);
  });

  it('an entry with cwd covers calls whose real cwd is that directory or inside it', () => {
    const entry = { pattern: 'git status *', cwd: '/home/me/repo' };
    expect(allowlistEntryCovers(entry, git('/home/me/repo'), posix)).toBe(true);
    expect(allowlistEntryCovers(entry, git('/home/me/repo/src/deep'), posix)).toBe(true);
    expect(allowlistEntryCovers(entry, git('/home/me/repo-evil'), posix)).toBe(false);
    expect(allowlistEntryCovers(entry, git('/home/me'), posix)).toBe(false);
    expect(allowlistEntryCovers(entry, git(), posix)).toBe(false);
  });

  it('no .. tricks: paths with dot segments or relative paths are never inside a scope', () => {
    expect(isInsideCwdScope('/home/me/repo/../../etc', '/home/me/repo', posix)).toBe(false);
    expect(isInsideCwdScope('/home/me/repo/./x', '/home/me/repo', posix)).toBe(false);
    expect(isInsideCwdScope('repo', '/home/me/repo', posix)).toBe(false);
    expect(isInsideCwdScope('/home/me/repo/', '/home/me/repo', posix)).toBe(true);
    expect(isInsideCwdScope('/anything', '/', posix)).toBe(true);
    expect(isInsideCwdScope('C:\\Work\\Repo\\src', 'c:/work/repo', windows)).toBe(true);
    expect(isInsideCwdScope('C:\\Work\\Repo2', 'C:\\Work\\Repo', windows)).toBe(false);
    expect(() => parseExecApprovalPolicy({ allowlist: [{ pattern: 'ls', cwd: '/a/../b' }] })).toThrow(/cwd may not contain/);
    expect(() => parseExecApprovalPolicy({ allowlist: [{ pattern: 'ls', cwd: 'relative' }] })).toThrow(/cwd must be an absolute path/);
  });

  it('a call that sets env is covered only by an entry recording exactly that env', () => {
    expect(allowlistEntryCovers('git status', git(undefined, { FOO: '1' }), posix)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'git status', env: { FOO: '1' } }, git(undefined, { FOO: '1' }), posix)).toBe(true);
    expect(allowlistEntryCovers({ pattern: 'git status', env: { FOO: '1' } }, git(undefined, { FOO: '2' }), posix)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'git status', env: { FOO: '1' } }, git(undefined, { FOO: '1', BAR: '' }), posix)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'git status', env: { FOO: '1', BAR: '' } }, git(undefined, { FOO: '1' }), posix)).toBe(false);
    expect(allowlistEntryCovers({ pattern: 'git status', env: { FOO: '1' } }, git(), posix)).toBe(true);
  });

  it('"allow always" records the exact pattern, the cwd as the scope and the exact env', () => {
    expect(entryForTarget(git(), posix)).toBe('git status');
    expect(entryForTarget(git('/home/me/repo'), posix)).toEqual({ pattern: 'git status', cwd: '/home/me/repo' });
    expect(entryForTarget(git(undefined, { GIT_PAGER: 'less' }), posix)).toEqual({ pattern: 'git status', env: { GIT_PAGER: 'less' } });
    expect(entryForTarget({ argv: [], shell: true }, posix)).toBeUndefined();
  });

  it('old string entries and scoped entries load side by side', () => {
    const policy = parseExecApprovalPolicy({ allowlist: ['git status*', { pattern: 'make *', cwd: '/home/me/repo' }, { pattern: 'env', env: { A: 'b' } }] });
    expect(policy.allowlist).toEqual(['git status*', { pattern: 'make *', cwd: '/home/me/repo' }, { pattern: 'env', env: { A: 'b' } }]);
    expect(() => parseExecApprovalPolicy({ allowlist: [{ pattern: 'ls', extra: 1 }] })).toThrow(/Invalid exec approval policy/);
  });
});

describe('code-loading environment variables', () => {
  const call = (env: Record<string, string>): ExecTarget => ({ argv: ['git', 'status'], resolvedPath: '/usr/bin/git', env });
  const gitEnv = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'touch /tmp/x' };

  it("mode 'ask' always asks, even with a covering pattern, naming the keys", () => {
    expect(evaluateExecPolicy({ mode: 'ask', allowlist: ['git status *'] }, call(gitEnv), posix)).toEqual({
      verdict: 'ask',
      codeLoadingEnv: ['GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0'],
    });
  });

  it("mode 'allowlist' refuses them (code_env, keys named)", () => {
    expect(evaluateExecPolicy({ mode: 'allowlist', allowlist: ['git status *'] }, call({ LD_PRELOAD: '/tmp/x.so' }), posix)).toEqual({
      verdict: 'deny',
      reason: 'code_env',
      codeLoadingEnv: ['LD_PRELOAD'],
    });
  });

  it("mode 'full' asks for them instead of running", () => {
    expect(evaluateExecPolicy({ mode: 'full', allowlist: [] }, call({ PATH: '/tmp/evil' }), posix)).toEqual({ verdict: 'ask', codeLoadingEnv: ['PATH'] });
    expect(evaluateExecPolicy({ mode: 'full', allowlist: [] }, call({ COLOR: '1' }), posix)).toEqual({ verdict: 'allow', reason: 'full' });
  });

  it('an entry that recorded the exact value covers them in every mode but deny', () => {
    const allowlist = [{ pattern: 'git status', env: { GIT_PAGER: 'cat' } }];
    for (const mode of ['ask', 'allowlist', 'full'] as const) {
      expect(evaluateExecPolicy({ mode, allowlist }, call({ GIT_PAGER: 'cat' }), posix)).toMatchObject({ verdict: 'allow', reason: 'allowlist' });
      expect(evaluateExecPolicy({ mode, allowlist }, call({ GIT_PAGER: 'sh -c x' }), posix).verdict).not.toBe('allow');
    }
    expect(evaluateExecPolicy({ mode: 'deny', allowlist }, call({ GIT_PAGER: 'cat' }), posix)).toEqual({ verdict: 'deny', reason: 'deny' });
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
