import { CliError } from './errors.js';
import type { Context } from './context.js';
import { callCommand, listTools } from './commands/tools.js';
import { version } from './version.js';

/**
 * The bare `capnode` with flags: `--version`, `--list-tools`, `--command`. Bundled into `dist/bin.js`
 * (the cold-start path), unlike every other command.
 */
export async function root(context: Context): Promise<number> {
  const { args } = context;
  if (args.flags.has('version')) {
    context.out(`capnode ${version()}`);
    return 0;
  }
  if (args.flags.has('list-tools')) {
    if (args.flags.has('command')) throw new CliError('usage', 'use either --list-tools or --command, not both');
    if (args.flags.has('markdown')) return (await import('./commands/plugins.js')).listToolsMarkdown(context);
    return listTools(context);
  }
  if (args.flags.has('markdown')) throw new CliError('usage', '--markdown applies to --list-tools');
  if (args.flags.has('command')) return callCommand(context);
  if (args.flags.has('params')) throw new CliError('usage', '--params needs --command <name>');
  throw new CliError('usage', 'nothing to do — see capnode --help');
}

/** The flags that make the bare `capnode` do something (else it prints the overview). */
export const ROOT_ACTIONS = ['version', 'list-tools', 'markdown', 'command', 'params'] as const;
