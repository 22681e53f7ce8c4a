import { ProtocolFormatError } from './errors.js';

type Frame =
  | { readonly kind: 'array'; readonly source: object; readonly items: readonly unknown[]; index: number }
  | {
      readonly kind: 'object';
      readonly source: object;
      readonly record: Readonly<Record<string, unknown>>;
      readonly keys: readonly string[];
      index: number;
      written: number;
    };

/**
 * The canonical JSON text of `value` (RFC 8785, JSON Canonicalization Scheme): object members sorted
 * by the UTF-16 code units of their names, no whitespace, numbers in ECMAScript form (`1e+21`, `0.1`,
 * `-0` → `0`), strings escaped as `JSON.stringify` does. Equal JSON data gives equal text, so the text
 * can be hashed ({@link argumentsHash}).
 *
 * Accepts what survives a JSON round trip unchanged: `null`, booleans, finite numbers, strings,
 * arrays, and plain objects (prototype `Object.prototype` or `null`). A `toJSON()` method is honoured
 * as by `JSON.stringify`. An object member whose value is `undefined` is left out (as on the wire).
 * Nesting depth is not limited by the call stack.
 *
 * @throws {ProtocolFormatError} `unserializable_value` for `undefined` (outside object members),
 * functions, symbols, bigints, non-finite numbers, and non-plain objects (`Map`, class instances, ...);
 * `cyclic_value` for a cycle. The message names the path, e.g. `$.items[2].size`.
 *
 * @example
 * canonicalJson({ b: [1.0, 'x'], a: null }); // '{"a":null,"b":[1,"x"]}'
 */
export function canonicalJson(value: unknown): string {
  const stack: Frame[] = [];
  const ancestors = new Set<object>();
  let out = '';

  const fail = (code: 'unserializable_value' | 'cyclic_value', what: string): never => {
    throw new ProtocolFormatError(code, `Cannot canonicalize ${what} at ${pathOf(stack)}`);
  };

  /** Writes a scalar, or opens a container by pushing its frame. */
  const open = (input: unknown): void => {
    switch (typeof input) {
      case 'string':
        out += JSON.stringify(input);
        return;
      case 'number':
        if (!Number.isFinite(input)) fail('unserializable_value', `the non-finite number ${String(input)}`);
        out += String(input);
        return;
      case 'boolean':
        out += input ? 'true' : 'false';
        return;
      case 'object':
        break;
      default:
        return fail('unserializable_value', typeof input === 'undefined' ? 'undefined' : `a ${typeof input}`);
    }
    if (input === null) {
      out += 'null';
      return;
    }
    if (ancestors.has(input)) fail('cyclic_value', 'a cyclic reference');
    if (Array.isArray(input)) {
      ancestors.add(input);
      stack.push({ kind: 'array', source: input, items: input, index: 0 });
      out += '[';
      return;
    }
    const prototype: unknown = Object.getPrototypeOf(input);
    if (prototype !== Object.prototype && prototype !== null) fail('unserializable_value', `a ${constructorName(input)}`);
    const record = input as Record<string, unknown>;
    ancestors.add(input);
    stack.push({ kind: 'object', source: input, record, keys: Object.keys(record).sort(), index: 0, written: 0 });
    out += '{';
  };

  open(toJsonValue(value, ''));
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    if (frame.kind === 'array') {
      if (frame.index < frame.items.length) {
        const index = frame.index;
        frame.index += 1;
        if (index > 0) out += ',';
        open(toJsonValue(frame.items[index], String(index)));
        continue;
      }
      out += ']';
    } else {
      let opened = false;
      while (frame.index < frame.keys.length) {
        const key = frame.keys[frame.index] as string;
        frame.index += 1;
        const member = toJsonValue(frame.record[key], key);
        if (member === undefined) continue;
        if (frame.written > 0) out += ',';
        frame.written += 1;
        out += `${JSON.stringify(key)}:`;
        open(member);
        opened = true;
        break;
      }
      if (opened) continue;
      out += '}';
    }
    stack.pop();
    ancestors.delete(frame.source);
  }
  return out;
}

/**
 * Hex SHA-256 of the UTF-8 {@link canonicalJson} of `value`: a stable fingerprint of tool arguments
 * (or any JSON data) for idempotency keys and audit records. Key order, number spelling and escaping
 * do not change it. Uses Web Crypto, so it runs on any runtime; `@capnode/protocol/node` has a sync twin.
 *
 * @throws {ProtocolFormatError} as {@link canonicalJson}.
 */
export async function argumentsHash(value: unknown, options: { signal?: AbortSignal } = {}): Promise<string> {
  options.signal?.throwIfAborted();
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function toJsonValue(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return value;
}

function constructorName(value: object): string {
  const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'non-plain object';
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function pathOf(stack: readonly Frame[]): string {
  let path = '$';
  for (const frame of stack) {
    if (frame.kind === 'array') {
      path += `[${frame.index - 1}]`;
    } else {
      const key = frame.keys[frame.index - 1] ?? '';
      path += IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return path;
}
