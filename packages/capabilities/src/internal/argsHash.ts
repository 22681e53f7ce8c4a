/** JSON with object keys sorted, so equal arguments give equal text whatever their key order. */
function canonical(value: unknown, depth = 0): string {
  if (depth > 64) throw new RangeError('arguments nest too deeply to hash');
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, depth + 1)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key], depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `sha256:<hex>` of the command name (lower-cased) and its parsed arguments: an identical retry of a
 * call hashes the same, any change to what runs changes it.
 */
export async function hashInvocationArgs(command: string, args: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(`${command.toLowerCase()}\n${canonical(args)}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return `sha256:${hex}`;
}
