/**
 * The brand every capnode error class carries on its prototype: a registered symbol (`Symbol.for`),
 * so two bundled copies of this module (the CLI's fast path and its lazily loaded commands, a host
 * installed beside a plugin) recognise each other's errors where `instanceof` cannot. Its value is
 * the class's name.
 */
const ERROR_BRAND: unique symbol = Symbol.for('capnode.error') as never;

interface Branded {
  readonly [ERROR_BRAND]?: unknown;
}

/** What `new X(code, message, options)` takes besides the code and the message. */
export interface ErrorClassOptions {
  /** The underlying failure; kept local (never sent to a remote caller). Absent when `undefined`. */
  readonly cause?: unknown;
}

/** An instance of a class made by {@link defineErrorClass}. */
export interface CodedError<Code extends string> extends Error {
  /** Machine-readable reason, one of the class's codes; stable across every boundary. */
  readonly code: Code;
}

/** Any constructor; the `this` of a static guard, so it narrows to the subclass it is called on. */
type AnyClass = abstract new (...args: never[]) => unknown;

/** The class {@link defineBrandedErrorClass} returns: an `Error` with a name and the brand. */
export interface BrandedErrorClass {
  new (message: string, options?: ErrorClassOptions): Error;
  readonly prototype: Error;
  /** True for an instance of this class or a subclass, from any copy of the module that defined it. */
  is<C extends AnyClass>(this: C, value: unknown): value is InstanceType<C>;
}

/** The class {@link defineErrorClass} returns. */
export interface CodedErrorClass<Code extends string> {
  new (code: Code, message: string, options?: ErrorClassOptions): CodedError<Code>;
  readonly prototype: CodedError<Code>;
  /** Every code of the class, in the order given. */
  readonly codes: readonly Code[];
  /** True for an instance of this class or a subclass, from any copy of the module that defined it. */
  is<C extends AnyClass>(this: C, value: unknown): value is InstanceType<C>;
}

/** The brand of `value` (an error, or an error class's prototype): the class name, or `undefined` when it has none. */
export function errorBrandOf(value: unknown): string | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const brand = (value as Branded)[ERROR_BRAND];
  return typeof brand === 'string' ? brand : undefined;
}

/** True when `value` carries the brand of the error class named `name` (see {@link errorBrandOf}). */
export function hasErrorBrand(value: unknown, name: string): boolean {
  return typeof value === 'object' && value !== null && (value as Branded)[ERROR_BRAND] === name;
}

function brand(prototype: object, name: string): void {
  Object.defineProperty(prototype, ERROR_BRAND, { value: name });
}

/**
 * An `Error` base class named `name` that carries the cross-bundle brand, for an error whose shape
 * is not a string code (the wire's `ProtocolError`, with its numeric JSON-RPC code and `data`);
 * {@link defineErrorClass} is the usual choice. Subclass it; `X.is(value)` is the guard.
 *
 * @example
 * export class ProtocolError extends defineBrandedErrorClass('ProtocolError') {
 *   constructor(readonly code: number, message: string) { super(message); }
 * }
 */
export function defineBrandedErrorClass(name: string): BrandedErrorClass {
  class BrandedError extends Error {
    constructor(message: string, options?: ErrorClassOptions) {
      super(message, options?.cause === undefined ? undefined : { cause: options.cause });
      this.name = name;
    }

    static is(value: unknown): boolean {
      return hasErrorBrand(value, name);
    }
  }
  brand(BrandedError.prototype, name);
  Object.defineProperty(BrandedError, 'name', { value: name });
  return BrandedError as unknown as BrandedErrorClass;
}

/**
 * A package's error class: `new X(code, message, { cause })` with `name` set to `name`, `code` one
 * of `codes` (a string union in types), `cause` only when given, and the cross-bundle brand on its
 * prototype, so `X.is(value)` recognises instances from every copy of the package. Extend the
 * result to add fields; the brand and the guard are inherited.
 *
 * @example
 * export class HostError extends defineErrorClass('HostError', ['io', 'locked', 'closed']) {}
 * export type HostErrorCode = HostError['code'];
 * export function isHostError(value: unknown): value is HostError {
 *   return HostError.is(value);
 * }
 */
export function defineErrorClass<const Codes extends readonly string[]>(name: string, codes: Codes): CodedErrorClass<Codes[number]> {
  const Base = defineBrandedErrorClass(name);
  class CodedErrorBase extends Base {
    static readonly codes: readonly string[] = Object.freeze([...codes]);
    readonly code: string;

    constructor(code: string, message: string, options?: ErrorClassOptions) {
      super(message, options);
      this.code = code;
    }
  }
  Object.defineProperty(CodedErrorBase, 'name', { value: name });
  return CodedErrorBase as unknown as CodedErrorClass<Codes[number]>;
}
