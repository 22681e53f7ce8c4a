/**
 * A last-in, first-out stack of async clean-ups: push each part as it is created, unwind the stack
 * in reverse to close (Node 20 has no `AsyncDisposableStack`).
 */
export interface AsyncStack {
  /** Pushes a clean-up; it runs before every one pushed earlier. */
  defer(onDispose: () => unknown): void;
  /** Pushes `resource`'s `close` and hands `resource` back. */
  use<T extends { close(): Promise<void> | void }>(resource: T): T;
  /** Runs every clean-up, last pushed first, each awaited; rejects with the first failure after all ran. Idempotent. */
  disposeAsync(): Promise<void>;
  readonly disposed: boolean;
  [Symbol.asyncDispose](): Promise<void>;
}

/** An empty {@link AsyncStack}; the host builds its parts onto one. */
export function createAsyncStack(): AsyncStack {
  const cleanUps: (() => unknown)[] = [];
  let disposing: Promise<void> | undefined;
  const stack: AsyncStack = {
    defer(onDispose) {
      if (disposing) throw new Error('the stack is already disposed');
      cleanUps.push(onDispose);
    },
    use(resource) {
      stack.defer(() => resource.close());
      return resource;
    },
    disposeAsync() {
      disposing ??= (async () => {
        const failures: unknown[] = [];
        for (let cleanUp = cleanUps.pop(); cleanUp; cleanUp = cleanUps.pop()) {
          try {
            await cleanUp();
          } catch (error) {
            failures.push(error);
          }
        }
        if (failures.length > 0) throw failures[0];
      })();
      return disposing;
    },
    get disposed() {
      return disposing !== undefined;
    },
    [Symbol.asyncDispose]: () => stack.disposeAsync(),
  };
  return stack;
}
