import type { HostLog } from '../context/hostLogging.js';

/** Work the host runs without waiting for it (a listener closing while it serves the request that closes it); `close` waits for it. */
export interface BackgroundWork {
  run(work: Promise<unknown>): void;
  /** Resolves once everything run so far settled. */
  settled(): Promise<void>;
}

export function createBackgroundWork(log: HostLog): BackgroundWork {
  const background = new Set<Promise<unknown>>();
  return {
    run(work) {
      const tracked = work.catch((error: unknown) => log('error', `${(error as Error)?.message ?? String(error)}`)).finally(() => background.delete(tracked));
      background.add(tracked);
    },
    async settled() {
      await Promise.allSettled([...background]);
    },
  };
}

/** The host's parts, closed by {@link closeHostParts} in this order. */
export interface HostClosingParts {
  /** Ends what streams or waits for input at once: stdio's stdin, the admin event streams. */
  readonly abortInputs: () => void;
  readonly dashboard: { close(): Promise<void> };
  readonly plugins: { close(): Promise<void> };
  /** Denies what is pending. */
  readonly approvals: { close(): Promise<void> };
  readonly stopNotifier: () => Promise<void>;
  /** The MCP listener (draining in-flight requests), then the admin-only listeners. */
  readonly closeListener: () => Promise<void>;
  readonly closeStdioAdmin: () => Promise<void>;
  readonly closeNodeAdmin: () => Promise<void>;
  readonly background: BackgroundWork;
  readonly gateway: { close(): Promise<void> };
  /** Imported MCP servers: their processes end. */
  readonly imports: { close(): Promise<void> };
  /** Flushes and closes the audit log. */
  readonly pipeline: { close(): Promise<void> };
  readonly releaseLock: () => void;
  /** Last: the "stopped" line, then the log file. */
  readonly closeLog: () => void;
}

/**
 * Closes the host: first what takes new work (dashboard, plugins, approvals, listeners), then
 * what work in flight needs (gateway, imported servers, audit log), the lock and the log last.
 */
export async function closeHostParts(parts: HostClosingParts): Promise<void> {
  parts.abortInputs();
  await parts.dashboard.close();
  await parts.plugins.close();
  await parts.approvals.close();
  await parts.stopNotifier();
  await parts.closeListener();
  await parts.closeStdioAdmin();
  await parts.closeNodeAdmin();
  await parts.background.settled();
  await parts.gateway.close();
  await parts.imports.close();
  await parts.pipeline.close();
  parts.releaseLock();
  parts.closeLog();
}
