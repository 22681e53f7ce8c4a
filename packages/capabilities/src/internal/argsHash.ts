import { canonicalJson, sha256Hex } from './canonicalJson.js';

/**
 * The argument hash an approval request carries: `sha256:<hex>` of the canonical JSON (keys sorted)
 * of `{ command, args }`, with the command name lower-cased and the parsed arguments. An identical
 * retry of a call hashes the same; any change to what runs changes it.
 */
export async function hashInvocationArgs(command: string, args: unknown): Promise<string> {
  return `sha256:${await sha256Hex(canonicalJson({ command: command.toLowerCase(), args: args ?? {} }))}`;
}
