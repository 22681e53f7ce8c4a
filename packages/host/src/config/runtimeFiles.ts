import { readFileSync, rmSync } from 'node:fs';
import { writePrivateFileAtomic } from '@capnode/toolkit/node';
import type { RuntimeState } from './paths.js';

/** Writes a runtime file the CLI finds this host by; a failure is logged, not thrown (the host still serves). */
export async function publishRuntime(path: string, runtime: RuntimeState, log: (level: 'warning', message: string) => void): Promise<void> {
  try {
    await writePrivateFileAtomic(path, `${JSON.stringify(runtime, null, 2)}\n`);
  } catch (error) {
    log('warning', `cannot write ${path} (the CLI will not find this host): ${(error as Error).message}`);
  }
}

/** Removes a runtime file, but only the one this `instance` of this process wrote: another host of the process may have replaced it. */
export function unpublishRuntime(path: string, instance: string): void {
  try {
    const runtime = JSON.parse(readFileSync(path, 'utf8')) as Partial<RuntimeState>;
    if (runtime.pid === process.pid && runtime.instance === instance) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}

export interface RuntimeFilesOptions {
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  readonly instance: string;
  /** When the host was created (ms since the epoch). */
  readonly started: number;
  readonly version: string;
  /** The dashboard's URL while it listens. */
  readonly dashboardUrl: () => string | undefined;
  readonly log: (level: 'warning', message: string) => void;
}

/** What a runtime file says besides what every one of this host's says (pid, instance, start, version, dashboard). */
export type RuntimeEntry = Pick<RuntimeState, 'kind' | 'adminUrl'> & { readonly url?: string };

/** This host's runtime files (`host.json`, `run/stdio-<pid>.json`, `run/node-<pid>.json`). */
export interface RuntimeFiles {
  publish(path: string, entry: RuntimeEntry): Promise<void>;
  /** Removes `path` when this instance wrote it. */
  unpublish(path: string): void;
}

export function createRuntimeFiles(options: RuntimeFilesOptions): RuntimeFiles {
  return {
    publish(path, entry) {
      const dashboardUrl = options.dashboardUrl();
      const runtime: RuntimeState = {
        pid: process.pid,
        instance: options.instance,
        kind: entry.kind,
        ...(entry.url === undefined ? {} : { url: entry.url }),
        adminUrl: entry.adminUrl,
        startedAt: new Date(options.started).toISOString(),
        version: options.version,
        ...(dashboardUrl === undefined ? {} : { dashboardUrl }),
      };
      return publishRuntime(path, runtime, options.log);
    },
    unpublish: (path) => unpublishRuntime(path, options.instance),
  };
}
