import { parseArgs } from './args.js';
import { COMMANDS, FLAG_SPEC, findCommand } from './commandTable.js';
import { createContext, type Context } from './context.js';
import { CliError, ExitCode, isCliError } from './errors.js';
import { commandHelp, overviewHelp } from './help.js';
import { ROOT_ACTIONS } from './root.js';
import { closeNames } from './suggest.js';

// The lazily imported commands (dist/commands/*.mjs) import the error class from this file (see
// tsup.config.ts), so both bundles share one CliError.
export { CliError, ExitCode, isCliError, hostFailure } from './errors.js';

function unknownCommand(name: string): CliError {
  const names = COMMANDS.filter((row) => row.name && !row.hidden).map((row) => row.name);
  const hint = closeNames(name, names, 1)[0];
  return new CliError('usage', `unknown command '${name}'${hint ? ` (did you mean ${hint}?)` : ''} — see capnode --help`);
}

/** Parses nothing itself: looks the command up in the table, checks its flags, answers help, runs it. */
async function run(context: Context): Promise<number> {
  const { args } = context;
  const name = args.positionals[0] ?? '';
  const row = findCommand(name);
  if (!row) throw unknownCommand(name);
  if (name === 'help') {
    const topic = args.positionals[1];
    if (topic === undefined) {
      context.out(overviewHelp());
      return 0;
    }
    const target = findCommand(topic);
    if (!target || target.name === '') throw unknownCommand(topic);
    context.out(commandHelp(target));
    return 0;
  }
  for (const key of args.flags.keys()) {
    if (key !== 'help' && !(row.flags as readonly string[]).includes(key)) {
      throw new CliError('usage', `--${key} does not apply to ${name ? `capnode ${name}` : 'this command'} — see capnode ${name ? `help ${name}` : '--help'}`);
    }
  }
  if (args.flags.has('help')) {
    context.out(name === '' ? overviewHelp() : commandHelp(row));
    return 0;
  }
  if (name === '' && !ROOT_ACTIONS.some((key) => args.flags.has(key))) {
    context.out(overviewHelp());
    return args.flags.size === 0 ? 0 : ExitCode.usage;
  }
  return row.run(context);
}

async function main(): Promise<void> {
  // `capnode … | head`: the reader went away; stop quietly instead of an EPIPE stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  let code: number;
  try {
    code = await run(createContext(parseArgs(process.argv.slice(2), FLAG_SPEC)));
  } catch (error) {
    if (isCliError(error)) {
      if (error.code !== 'interrupted') process.stderr.write(`capnode: ${error.message}\n`);
      code = error.exitCode;
    } else {
      process.stderr.write(`capnode: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
      code = ExitCode.failure;
    }
  }
  process.exitCode = code;
}

// Run only as the program, not when a command module imports the shared error class from this file.
if (require.main === module) void main();
