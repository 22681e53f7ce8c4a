import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_IDS } from '@capnode/host/setup';
import { COMMANDS, CONFIG_CLIENTS, FLAGS, GLOBAL_FLAGS, findCommand } from './commandTable.js';
import { commandHelp, overviewHelp } from './help.js';

describe('command table', () => {
  it('has one row per name, each flag known, and a run function', () => {
    const names = COMMANDS.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    for (const row of COMMANDS) {
      for (const name of row.flags) expect(FLAGS, `${row.name}: --${name}`).toHaveProperty(name);
      expect(typeof row.run).toBe('function');
      expect(row.usage.length, row.name).toBeGreaterThan(0);
    }
  });

  it('lists the clients the host module knows', () => {
    expect([...CONFIG_CLIENTS]).toEqual([...CLIENT_IDS]);
  });

  it('imports no command module statically (only the bundled fast path reaches commands/tools)', () => {
    for (const file of ['commandTable.ts', 'help.ts', 'bin.ts']) {
      const source = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
      expect(source, file).not.toMatch(/^import[^\n]*from '\.\/commands\//m);
    }
    expect(readFileSync(new URL('./root.ts', import.meta.url), 'utf8').match(/from '\.\/commands\/[^']+'/g)).toEqual(["from './commands/tools.js'"]);
  });

  it('generates the overview from every visible row and per-command help with its flags', () => {
    const overview = overviewHelp();
    for (const row of COMMANDS.filter((entry) => !entry.hidden)) for (const [syntax] of row.usage) expect(overview).toContain(syntax);
    const help = commandHelp(findCommand('logs')!);
    expect(help).toMatch(/^capnode logs — /);
    expect(help).toContain('-f, --follow');
    expect(help).toContain('-n, --lines <N>');
  });

  it('takes the overview\'s global options from the flag table: one aligned line per GLOBAL_FLAGS entry, nothing else', () => {
    const lines = overviewHelp().split('\n');
    const start = lines.indexOf('Options:');
    const options = lines.slice(start + 1, lines.indexOf('', start));
    expect(options.map((line) => line.trim().split(/\s{2,}/))).toEqual(
      GLOBAL_FLAGS.map((name) => {
        const info: { short?: string; value?: string; help: string } = FLAGS[name];
        return [`${info.short ? `-${info.short}, ` : ''}--${name}${info.value ? ` <${info.value}>` : ''}`, info.help];
      }),
    );
    // One column: every help text starts at the same offset.
    expect(new Set(GLOBAL_FLAGS.map((name, index) => options[index]!.lastIndexOf(FLAGS[name].help))).size).toBe(1);
    expect(options.join('\n')).toContain('--json           raw JSON output');
  });
});
