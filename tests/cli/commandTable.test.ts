import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, runCli, tempHome } from './helpers.js';

describe('capnode help from the command table', () => {
  it('capnode --help is the overview; help <command> and <command> --help print that command', async () => {
    using dir = tempHome();
    const overview = await runCli(['--help'], dir.home);
    expect(overview.code).toBe(0);
    for (const line of ['capnode doctor', 'capnode logs [-f] [-n N]', 'capnode config <client> --write', 'capnode help <command>', 'Exit codes:']) expect(overview.stdout).toContain(line);
    expect((await runCli(['help'], dir.home)).stdout).toBe(overview.stdout);

    const viaHelp = await runCli(['help', 'servers'], dir.home);
    const viaFlag = await runCli(['servers', '--help'], dir.home);
    expect(viaHelp.code).toBe(0);
    expect(viaFlag).toEqual(viaHelp);
    expect(viaHelp.stdout).toMatch(/^capnode servers — /);
    expect(viaHelp.stdout).toContain('Subcommands: list, add, remove, test, login, logout, import, reexport');
    expect(viaHelp.stdout).toContain('--header <K=V>');
    expect(viaHelp.stdout).not.toContain('capnode serve [--port N]');

    // --help wins over the command's own checks, even with a subcommand.
    const sub = await runCli(['approvals', 'allow', '--help'], dir.home);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('capnode approvals allow <id> [--always]');
  });

  it('refuses an unknown command or help topic with a suggestion, and a flag another command owns', async () => {
    using dir = tempHome();
    const typo = await runCli(['stauts'], dir.home);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'stauts' (did you mean status?)");
    const topic = await runCli(['help', 'doctr'], dir.home);
    expect(topic.code).toBe(2);
    expect(topic.stderr).toContain('did you mean doctor?');
    const misplaced = await runCli(['logs', '--write'], dir.home);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--write does not apply to capnode logs — see capnode help logs');
  });

  it('answers errors thrown in a lazily loaded command with their exit code (one CliError for both bundles)', async () => {
    using dir = tempHome();
    // `status` runs in dist/commands/status.mjs; "no host" is CliError 'unreachable' → exit 3, no stack trace.
    const result = await runCli(['status', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^capnode: no capnode host on http:\/\/127\.0\.0\.1:9\//);
    expect(result.stderr).not.toContain('unexpected error');
  });

  it('the built command modules hold no copy of CliError: they import the one in dist/bin.js', () => {
    const dir = join(dirname(cliPath), 'commands');
    const files = readdirSync(dir).filter((name) => name.endsWith('.mjs'));
    const importers = files.filter((name) => readFileSync(join(dir, name), 'utf8').includes('from "../bin.js"'));
    expect(importers.length).toBeGreaterThan(0);
    for (const name of files) expect(readFileSync(join(dir, name), 'utf8'), name).not.toMatch(/CliError = class|class CliError|capnode\.CliError/);
    expect(readFileSync(cliPath, 'utf8')).toMatch(/CliError = class|class CliError/);
  });
});
