import { COMMANDS, FLAGS, GLOBAL_FLAGS, SECTIONS, type CommandRow, type FlagInfo, type FlagName, type Section, type UsageLine } from './commandTable.js';

const WIDTH = 46;

function usageLines(lines: readonly UsageLine[]): string[] {
  // A syntax too long for the column gets its description on the next line, aligned.
  return lines.flatMap(([syntax, what]) => {
    if (!what) return [`  ${syntax}`];
    return syntax.length < WIDTH - 1 ? [`  ${syntax.padEnd(WIDTH)}${what}`] : [`  ${syntax}`, `  ${' '.repeat(WIDTH)}${what}`];
  });
}

/** A flag's syntax from its table entry: `-n, --lines <N>`, `--json`. */
function flagSyntax(name: FlagName): string {
  const flagInfo: FlagInfo = FLAGS[name];
  return `${flagInfo.short ? `-${flagInfo.short}, ` : ''}--${name}${flagInfo.value ? ` <${flagInfo.value}>` : ''}`;
}

/** The overview's options: {@link GLOBAL_FLAGS}, their help in one aligned column. */
function globalOptions(): string[] {
  const syntaxes = GLOBAL_FLAGS.map(flagSyntax);
  const width = Math.max(...syntaxes.map((syntax) => syntax.length)) + 2;
  return ['Options:', ...GLOBAL_FLAGS.map((name, index) => `  ${syntaxes[index]!.padEnd(width)}${FLAGS[name].help}`)];
}

const FOOTER = [
  'Config directory: CAPNODE_HOME, else the platform default (e.g. ~/.config/capnode).',
  'Exit codes: 0 ok, 1 failed (tool error, unknown tool, refused), 2 usage, 3 no host, 4 token refused, 130 interrupted.',
];

/** `capnode --help`: every visible row's usage lines, by section, then the global options. */
export function overviewHelp(commands: readonly CommandRow[] = COMMANDS): string {
  const root = commands.find((row) => row.name === '');
  const lines = [`capnode — ${root?.summary ?? ''}`];
  for (const section of Object.keys(SECTIONS) as Section[]) {
    const rows = commands.filter((row) => row.section === section && !row.hidden);
    if (rows.length === 0) continue;
    lines.push('', SECTIONS[section]);
    for (const row of rows) lines.push(...usageLines(row.usage));
    if (section === 'main') lines.push(...usageLines([['capnode help <command>', "one command's help (also: capnode <command> --help)"]]));
  }
  lines.push('', ...globalOptions(), '', ...FOOTER);
  return lines.join('\n');
}

/** `capnode help <name>` / `capnode <name> --help`: the row's summary, usage, subcommands and flags. */
export function commandHelp(row: CommandRow): string {
  const title = row.name === '' ? 'capnode' : `capnode ${row.name}`;
  const lines = [`${title} — ${row.summary}`, '', 'Usage:', ...usageLines(row.usage)];
  if (row.subcommands?.length) lines.push('', `${row.name === 'config' ? 'Clients' : 'Subcommands'}: ${row.subcommands.join(', ')}`);
  const flags = row.flags.map((name) => {
    const syntax = flagSyntax(name);
    return `  ${syntax.padEnd(24)}${syntax.length >= 24 ? ' ' : ''}${FLAGS[name].help}`;
  });
  lines.push('', 'Options:', ...flags, `  ${flagSyntax('help').padEnd(24)}this help`);
  if (row.notes?.length) lines.push('', ...row.notes);
  lines.push('', 'All commands: capnode --help');
  return lines.join('\n');
}
