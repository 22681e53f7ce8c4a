import type { HostLog } from '../context/hostLogging.js';

/** Work the host runs without waiting for it (a listener closing while it serves the request that closes it); `close` waits for it. */
export interface BackgroundWork {
  run(work: Promise<unknown>): void;
  /** Resolves once everything run so far settled. */
  settled(): Promise<void>;
  /** The same as `settled`: the host's stack waits for its background work before it closes what that work needs. */
  close(): Promise<void>;
}

export function createBackgroundWork(log: HostLog): BackgroundWork {
  const background = new Set<Promise<unknown>>();
  const settled = async (): Promise<void> => {
    await Promise.allSettled([...background]);
  };
  return {
    run(work) {
      const tracked = work.catch((error: unknown) => log('error', `${(error as Error)?.message ?? String(error)}`)).finally(() => background.delete(tracked));
      background.add(tracked);
    },
    settled,
    close: settled,
  };
}
