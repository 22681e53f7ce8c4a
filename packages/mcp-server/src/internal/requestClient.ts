/**
 * The name of the token each HTTP request authenticated with, kept on the request's lifetime hook
 * (the one object every serving path — sessionless, sessions, legacy SSE, per-request — hands down to
 * its calls). Set by the gate, read when a call's scope is built.
 *
 * A symbol-keyed property rather than a WeakMap: one is set on every request, and a WeakMap entry
 * costs an ephemeron-table insert and extra GC work where a property on an object the request owns
 * costs a store.
 */
const CLIENT = Symbol('capnode.requestClient');

interface Tagged {
  [CLIENT]?: string;
}

/** Records that the request behind `lifetime` authenticated as `name`. */
export function tagRequestClient(lifetime: object, name: string): void {
  (lifetime as Tagged)[CLIENT] = name;
}

/** The token name the request behind `lifetime` authenticated as, if any. */
export function requestClientOf(lifetime: object | undefined): string | undefined {
  return lifetime === undefined ? undefined : (lifetime as Tagged)[CLIENT];
}
