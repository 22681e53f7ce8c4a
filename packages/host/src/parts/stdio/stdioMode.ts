import { join } from 'node:path';
import type { Invoker } from '@capnode/capabilities';
import type { McpHttpServer } from '@capnode/mcp-server/node';
import type { DashboardService } from '../dashboard/service.js';
import type { ImportedTools } from '../imports/importedTools.js';
import type { HostPaths } from '../../config/paths.js';
import type { PluginManager } from '../plugins/plugins.js';
import { adminUrlOf, openAdminOnly, type AdminOnlyOptions } from '../listener/adminOnlyListener.js';
import type { HostLog } from '../../context/hostLogging.js';
import type { RuntimeFiles } from '../../config/runtimeFiles.js';

export interface StdioModeOptions {
  readonly paths: HostPaths;
  readonly invoker: Invoker;
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly plugins: Pick<PluginManager, 'ready'>;
  readonly imports: Pick<ImportedTools, 'start'>;
  readonly dashboard: Pick<DashboardService, 'start'>;
  readonly runtime: RuntimeFiles;
  readonly adminOnly: AdminOnlyOptions;
  readonly log: HostLog;
  readonly fileLog: HostLog;
  /** The host logged that it started (it logs that it stopped, then). */
  readonly announce: () => void;
}

/** MCP over stdin/stdout, with its admin-only listener published in `run/stdio-<pid>.json`. */
export interface StdioMode {
  /** See `Host.serveStdio`. */
  serve(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** `status().stdio`. */
  status(): { readonly state: 'stopped' | 'serving'; readonly adminUrl?: string };
  /** Ends serving: stdin is let go (the host is closing). */
  abort(): void;
  /** Closes the admin-only listener. */
  closeAdmin(): Promise<void>;
}

export function createStdioMode(options: StdioModeOptions): StdioMode {
  const controller = new AbortController();
  let serving = false;
  let admin: McpHttpServer | undefined;
  return {
    async serve(serveOptions = {}) {
      const { serveStdio } = await import('@capnode/mcp-server/stdio');
      const signal = serveOptions.signal ? AbortSignal.any([serveOptions.signal, controller.signal]) : controller.signal;
      await options.plugins.ready();
      serving = true;
      options.imports.start();
      const runFile = join(options.paths.runDir, `stdio-${process.pid}.json`);
      try {
        await options.dashboard.start();
        admin = await openAdminOnly(options.adminOnly, runFile, 'stdio');
        const connection = await serveStdio({ invoker: options.invoker, serverInfo: options.serverInfo, signal, onError: (error) => options.log('error', `stdio: ${error.message}`) });
        options.fileLog('info', `capnode ${options.serverInfo.version} serving MCP over stdio (pid ${process.pid})`);
        options.announce();
        await connection.closed;
      } finally {
        serving = false;
        const running = admin;
        admin = undefined;
        await running?.close();
        options.runtime.unpublish(runFile);
      }
    },
    status: () => (serving ? { state: 'serving', ...(admin ? { adminUrl: adminUrlOf(admin) } : {}) } : { state: 'stopped' }),
    abort: () => controller.abort(),
    async closeAdmin() {
      await admin?.close();
    },
  };
}
