import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/testHost.js';

const script = fileURLToPath(new URL('../../scripts/longFunctions.mjs', import.meta.url));

interface Offender {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
  readonly allowed: string | null;
}

function run(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A function whose body spans `lines` lines in total (declaration and closing brace included). */
function functionOf(name: string, lines: number): string {
  return [`export function ${name}(): number {`, '  let n = 0;', ...Array.from({ length: lines - 4 }, () => '  n += 1;'), '  return n;', '}'].join('\n');
}

describe('no function or closure over 150 lines in packages/*/src and apps/*/src (BRIEF style rule)', () => {
  it('the repository has no offender outside the allowlist, and no stale allowlist entry', () => {
    const result = run(['--json']);
    const report = JSON.parse(result.stdout) as { offenders: Offender[]; stale: string[] };
    // Split the function along its reasons to change, or (only with a reason) allowlist it in scripts/longFunctions.allow.json.
    expect(report.offenders.filter((offender) => offender.allowed === null)).toEqual([]);
    expect(report.stale).toEqual([]);
    for (const offender of report.offenders) expect(offender.allowed?.trim().length ?? 0).toBeGreaterThan(0);
    expect(result.status).toBe(0);
  });

  it('finds a 151-line function, a long closure and a long method; ignores tests, dist and a 150-line function', () => {
    using root = tempDir('capnode-long-');
    const src = join(root.path, 'packages', 'demo', 'src');
    mkdirSync(join(src, 'internal'), { recursive: true });
    mkdirSync(join(root.path, 'packages', 'demo', 'dist'), { recursive: true });
    mkdirSync(join(root.path, 'apps', 'cli', 'src'), { recursive: true });
    writeFileSync(join(src, 'long.ts'), `${functionOf('tooLong', 151)}\n${functionOf('justRight', 150)}\n`);
    const closure = functionOf('inner', 160).replace('export function inner(): number {', 'const inner = (): number => {').replace(/\}$/, '};');
    writeFileSync(join(src, 'internal', 'closure.ts'), `export function outer(): () => number {\n${closure}\n  return inner;\n}\n`);
    const method = functionOf('run', 155).replace('export function run(): number {', '  run(): number {');
    writeFileSync(join(root.path, 'apps', 'cli', 'src', 'klass.ts'), `export class Runner {\n${method}\n}\n`);
    writeFileSync(join(src, 'long.test.ts'), functionOf('longTest', 300));
    writeFileSync(join(root.path, 'packages', 'demo', 'dist', 'long.ts'), functionOf('built', 300));

    const result = run(['--json', '--root', root.path]);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as { offenders: Offender[] };
    expect(report.offenders.map(({ file, name, lines }) => ({ file, name, lines }))).toEqual([
      { file: 'packages/demo/src/internal/closure.ts', name: 'outer', lines: 163 },
      { file: 'packages/demo/src/internal/closure.ts', name: 'inner', lines: 160 },
      { file: 'apps/cli/src/klass.ts', name: 'run', lines: 155 },
      { file: 'packages/demo/src/long.ts', name: 'tooLong', lines: 151 },
    ]);

    // An allowlisted offender passes; an entry for something no longer long fails as stale.
    mkdirSync(join(root.path, 'scripts'));
    const allow = {
      'packages/demo/src/internal/closure.ts#outer': 'fixture',
      'packages/demo/src/internal/closure.ts#inner': 'fixture',
      'apps/cli/src/klass.ts#run': 'fixture',
      'packages/demo/src/long.ts#tooLong': 'fixture',
    };
    writeFileSync(join(root.path, 'scripts', 'longFunctions.allow.json'), JSON.stringify(allow));
    expect(run(['--root', root.path]).status).toBe(0);
    writeFileSync(join(root.path, 'scripts', 'longFunctions.allow.json'), JSON.stringify({ ...allow, 'packages/demo/src/long.ts#justRight': 'fixture' }));
    const stale = run(['--root', root.path]);
    expect(stale.status).toBe(1);
    expect(stale.stdout).toContain('stale allowlist entry (no longer over 150 lines; remove it): packages/demo/src/long.ts#justRight');
  });

  it('refuses a bad --max with exit status 2', () => {
    const result = run(['--max', 'lots']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--max takes a positive whole number of lines');
  });
});
