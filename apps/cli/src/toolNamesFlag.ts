import { flag, type ParsedArgs } from './args.js';
import { CliError } from './errors.js';

/** A tool name style (`@capnode/capabilities`' `ToolNameStyle`, spelled here so the CLI's startup loads no library). */
export type ToolNamesFlag = 'dotted' | 'underscore';

/** `--tool-names dotted|underscore`; `undefined` when absent, a usage error for any other value. */
export function toolNamesFlag(args: ParsedArgs): ToolNamesFlag | undefined {
  const value = flag(args, 'tool-names');
  if (value === undefined) return undefined;
  if (value === 'dotted' || value === 'underscore') return value;
  throw new CliError('usage', `--tool-names must be 'dotted' (system.run) or 'underscore' (system_run), got ${JSON.stringify(value)}`);
}

/** `url` with `?toolNames=<style>`, the per-connection selector of the host's MCP endpoint. */
export function withToolNames(url: string, style: ToolNamesFlag): string {
  const parsed = new URL(url);
  parsed.searchParams.set('toolNames', style);
  return parsed.toString();
}
