/**
 * The name of the token each HTTP request authenticated with, keyed by the request's lifetime hook
 * (the one object every serving path — sessionless, sessions, legacy SSE, per-request — hands down to
 * its calls). Set by the gate, read when a call's scope is built.
 */
const clients = new WeakMap<object, string>();

/** Records that the request behind `lifetime` authenticated as `name`. */
export function tagRequestClient(lifetime: object, name: string): void {
  clients.set(lifetime, name);
}

/** The token name the request behind `lifetime` authenticated as, if any. */
export function requestClientOf(lifetime: object | undefined): string | undefined {
  return lifetime === undefined ? undefined : clients.get(lifetime);
}
