import { ProtocolFormatError } from './errors.js';

/**
 * The text OpenAgent hashes into `arguments_sha256`: Python's
 * `json.dumps(normalise(args), sort_keys=True, separators=(",",":"), ensure_ascii=False, allow_nan=False)`.
 * Members sort by code point (U+FFFF before U+10000, unlike RFC 8785's UTF-16 order), integral numbers
 * print as integers (`1e21` → `1000000000000000000000`, `-0` → `0`), other numbers as Python's float
 * repr (`1e-07`, `1e-06`, `0.0001`), strings with only `"`, `\` and control characters escaped.
 *
 * A different form from {@link canonicalJson}: the two agree on most data but not on these points, and a
 * hash must match the server's byte for byte.
 *
 * @throws {ProtocolFormatError} `unserializable_value` for non-finite numbers, lone surrogates (Python
 * cannot encode them to UTF-8), `undefined`, functions, bigints and non-plain objects; `cyclic_value` for a cycle.
 */
export function openAgentCanonicalJson(value: unknown): string {
  const ancestors = new Set<object>();
  const parts: string[] = [];
  // Explicit stack of pending writes, so nesting depth is not limited by the call stack.
  const pending: (unknown | { readonly raw: string })[] = [value];
  const RAW = Symbol('raw');
  const raw = (text: string) => ({ [RAW]: text });
  const leave = new Map<object, object>();
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'object' && item !== null && RAW in item) {
      parts.push((item as Record<typeof RAW, string>)[RAW]);
      const left = leave.get(item);
      if (left) ancestors.delete(left);
      continue;
    }
    if (item === null) {
      parts.push('null');
    } else if (typeof item === 'boolean') {
      parts.push(item ? 'true' : 'false');
    } else if (typeof item === 'number') {
      parts.push(pythonNumber(item));
    } else if (typeof item === 'string') {
      parts.push(pythonString(item));
    } else if (typeof item === 'object') {
      if (ancestors.has(item)) throw new ProtocolFormatError('cyclic_value', 'Cannot canonicalize a cyclic reference');
      const close = raw(Array.isArray(item) ? ']' : '}');
      const queue: unknown[] = [];
      if (Array.isArray(item)) {
        parts.push('[');
        item.forEach((element, index) => {
          if (index > 0) queue.push(raw(','));
          queue.push(element);
        });
      } else {
        const prototype: unknown = Object.getPrototypeOf(item);
        if (prototype !== Object.prototype && prototype !== null) throw new ProtocolFormatError('unserializable_value', 'Cannot canonicalize a non-plain object');
        parts.push('{');
        const record = item as Record<string, unknown>;
        const keys = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort(compareCodePoints);
        keys.forEach((key, index) => {
          queue.push(raw(`${index > 0 ? ',' : ''}${pythonString(key)}:`), record[key]);
        });
      }
      ancestors.add(item);
      leave.set(close, item);
      pending.push(close);
      for (let index = queue.length - 1; index >= 0; index -= 1) pending.push(queue[index]);
    } else {
      throw new ProtocolFormatError('unserializable_value', `Cannot canonicalize ${typeof item === 'undefined' ? 'undefined' : `a ${typeof item}`}`);
    }
  }
  return parts.join('');
}

/** Orders strings by Unicode code point, as Python compares `str`. */
function compareCodePoints(left: string, right: string): number {
  const a = [...left];
  const b = [...right];
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const difference = (a[index] as string).codePointAt(0)! - (b[index] as string).codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `json.dumps(s, ensure_ascii=False)`: escapes `"`, `\` and C0 controls only, like `JSON.stringify` for well-formed text. */
function pythonString(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new ProtocolFormatError('unserializable_value', 'Cannot canonicalize a string with a lone surrogate');
  return JSON.stringify(text);
}

/** Python's `int` repr for integral values, its shortest float repr (exponent below 1e-4) otherwise. */
function pythonNumber(value: number): string {
  if (!Number.isFinite(value)) throw new ProtocolFormatError('unserializable_value', `Cannot canonicalize the non-finite number ${String(value)}`);
  if (Number.isInteger(value)) return value === 0 ? '0' : BigInt(value).toString();
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-4) return String(value);
  const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
  const sign = exponent.startsWith('-') ? '-' : '+';
  const digits = exponent.replace(/^[+-]/, '').padStart(2, '0');
  return `${mantissa}e${sign}${digits}`;
}
