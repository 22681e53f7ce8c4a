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
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop() as object;
    const depth = depths.pop() as number;
    const children: readonly unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child !== 'object' || child === null) continue;
      if (depth >= maxDepth) return true;
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}
