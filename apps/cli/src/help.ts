import { COMMANDS, FLAGS, SECTIONS, type CommandRow, type FlagInfo, type Section, type UsageLine } from './commandTable.js';

const WIDTH = 46;

function usageLines(lines: readonly UsageLine[]): string[] {
  // A syntax too long for the column gets its description on the next line, aligned.
  return lines.flatMap(([syntax, what]) => {
    if (!what) return [`  ${syntax}`];
    return syntax.length < WIDTH - 1 ? [`  ${syntax.padEnd(WIDTH)}${what}`] : [`  ${syntax}`, `  ${' '.repeat(WIDTH)}${what}`];
  });
}

const GLOBAL_OPTIONS = [
  'Options:',
  `  --url <url>      ${FLAGS.url.help}`,
  `  --token <token>  ${FLAGS.token.help}`,
  '  --json           raw JSON output',
  '  -h, --help       this help (capnode help <command>: one command);  -V, --version  the version',
];

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
  lines.push('', ...GLOBAL_OPTIONS, '', ...FOOTER);
  return lines.join('\n');
}

/** `capnode help <name>` / `capnode <name> --help`: the row's summary, usage, subcommands and flags. */
export function commandHelp(row: CommandRow): string {
  const title = row.name === '' ? 'capnode' : `capnode ${row.name}`;
  const lines = [`${title} — ${row.summary}`, '', 'Usage:', ...usageLines(row.usage)];
  if (row.subcommands?.length) lines.push('', `${row.name === 'config' ? 'Clients' : 'Subcommands'}: ${row.subcommands.join(', ')}`);
  const flags = row.flags.map((name) => {
    const flagInfo: FlagInfo = FLAGS[name];
    const syntax = `${flagInfo.short ? `-${flagInfo.short}, ` : ''}--${name}${flagInfo.value ? ` <${flagInfo.value}>` : ''}`;
    return `  ${syntax.padEnd(24)}${syntax.length >= 24 ? ' ' : ''}${flagInfo.help}`;
  });
  lines.push('', 'Options:', ...flags, `  ${'-h, --help'.padEnd(24)}this help`);
  if (row.notes?.length) lines.push('', ...row.notes);
  lines.push('', 'All commands: capnode --help');
  return lines.join('\n');
}
