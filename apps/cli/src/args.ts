import { CliError } from './errors.js';
import { closeNames } from './suggest.js';

/** Flags a command accepts: name (without dashes) → whether it takes a value. */
export type FlagSpec = Readonly<Record<string, 'value' | 'switch'>>;

export interface ParsedArgs {
  /** Every non-flag argument, those after `--` included. */
  readonly positionals: readonly string[];
  /** Each flag's last value (`true` for switches). */
  readonly flags: ReadonlyMap<string, string | true>;
  /** Every value of each value flag, in order (`--env A=1 --env B=2`). */
  readonly values: ReadonlyMap<string, readonly string[]>;
  /** The arguments after `--`, verbatim. */
  readonly rest: readonly string[];
}

const SHORT: Readonly<Record<string, string>> = { h: 'help', V: 'version', c: 'command', p: 'params', f: 'follow', n: 'lines', y: 'yes' };

/**
 * Parses `argv` against `spec`: `--name value`, `--name=value`, switches, the short aliases
 * `-h -V -c -p -f -n -y`, and `--` to end flags. Unknown flags and missing values are usage errors that
 * suggest the closest known flag.
 */
export function parseArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  const values = new Map<string, string[]>();
  let rest: readonly string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      positionals.push(...rest);
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (arg.length > 1 && arg.startsWith('-') && !/^-\d/.test(arg)) {
      const alias = SHORT[arg.slice(1)];
      if (alias === undefined) throw new CliError('usage', `unknown option ${arg} — see capnode --help`);
      name = alias;
    } else {
      positionals.push(arg);
      continue;
    }
    const kind = spec[name];
    if (kind === undefined) {
      const hint = closeNames(name, Object.keys(spec), 1)[0];
      throw new CliError('usage', `unknown option --${name}${hint ? ` (did you mean --${hint}?)` : ''} — see capnode --help`);
    }
    if (kind === 'switch') {
      if (inline !== undefined) throw new CliError('usage', `--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new CliError('usage', `--${name} needs a value`);
    flags.set(name, value);
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { positionals, flags, values, rest };
}

/** The string value of a value flag, or `undefined`. */
export function flag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

/** Every value given for a repeatable value flag, in order. */
export function flagValues(args: ParsedArgs, name: string): readonly string[] {
  return args.values.get(name) ?? [];
}

/** Parses a TCP port flag (0 picks a free port). */
export function portFlag(args: ParsedArgs, name = 'port'): number | undefined {
  const value = flag(args, name);
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new CliError('usage', `--${name} must be a port number 0-65535, got '${value}'`);
  return port;
}
