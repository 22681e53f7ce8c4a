/**
 * How deeply tool arguments may nest (the arguments object itself is level 1). Every transport refuses
 * deeper arguments with `invalid_arguments` before validation: recursive code (schema validation,
 * `JSON.stringify`, a forwarding client) would otherwise fail with a stack overflow, whose message
 * must not reach a remote caller. JSON-RPC messages themselves are parsed by `JSON.parse`, which
 * does not recurse.
 */
export const MAX_ARGUMENTS_DEPTH = 64;

/**
 * True when `value` nests arrays or objects more than `maxDepth` levels deep (a scalar is level 0,
 * `{}` and `[]` level 1). Walks with an explicit stack, never the call stack, and stops at the first
 * container past the limit, so any depth is answered without a stack overflow. Cycles count as deep.
 *
 * @example
 * exceedsJsonDepth({ a: [1] }, 2); // false
 * exceedsJsonDepth({ a: [[1]] }, 2); // true
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (maxDepth < 1) return true;
  // Containers still to visit and their levels; flat arguments (the common case) never push.
  const pending: object[] = [];
  const levels: number[] = [];
  let current: object = value;
  let depth = 1;
  for (;;) {
    if (Array.isArray(current)) {
      for (const child of current as unknown[]) {
        if (typeof child !== 'object' || child === null) continue;
        if (depth >= maxDepth) return true;
        pending.push(child);
        levels.push(depth + 1);
      }
    } else {
      const record = current as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        const child = record[key];
        if (typeof child !== 'object' || child === null) continue;
        if (depth >= maxDepth) return true;
        pending.push(child);
        levels.push(depth + 1);
      }
    }
    const next = pending.pop();
    if (next === undefined) return false;
    current = next;
    depth = levels.pop() as number;
  }
}
