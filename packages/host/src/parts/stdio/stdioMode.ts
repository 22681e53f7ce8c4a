import { join } from 'node:path';
import type { ToolNameStyle } from '@capnode/capabilities';
import { HOST_MARKER_CAPABILITY } from '@capnode/mcp-client';
import type { McpHttpServer } from '@capnode/mcp-server/node';
import type { ImportedTools } from '../imports/importedTools.js';
import { adminUrlOf, openAdminOnly, type AdminOnlyOptions } from '../listener/adminOnlyListener.js';
import type { HostContext } from '../../context/hostContext.js';
import type { ListenFn } from '../listener/mcpListener.js';
import type { RuntimeFiles } from '../../config/runtimeFiles.js';

export interface StdioModeOptions {
  /** Its signal (the host closes) lets stdin go. */
  readonly context: HostContext;
  readonly plugins: { ready(): Promise<void> };
  readonly imports: Pick<ImportedTools, 'start'>;
  readonly dashboard: { start(): Promise<unknown> };
  readonly listen: ListenFn;
  readonly runtime: RuntimeFiles;
}

/** MCP over stdin/stdout, with its admin-only listener published in `run/stdio-<pid>.json`. */
export interface StdioMode {
  /** See `Host.serveStdio`. */
  serve(options?: { readonly signal?: AbortSignal; readonly toolNames?: ToolNameStyle }): Promise<void>;
  /** `status().stdio`. */
  status(): { readonly state: 'stopped' | 'serving'; readonly adminUrl?: string };
  /** Closes the admin-only listener. */
  close(): Promise<void>;
}

export function createStdioMode(options: StdioModeOptions): StdioMode {
  const { context } = options;
  const { log, fileLog } = context.logging;
  const serverInfo = { name: 'capnode', version: context.version };
  const adminOnly: AdminOnlyOptions = { context, listen: options.listen, runtime: options.runtime };
  let serving = false;
  let admin: McpHttpServer | undefined;
  return {
    async serve(serveOptions = {}) {
      const { serveStdio } = await import('@capnode/mcp-server/stdio');
      const signal = serveOptions.signal ? AbortSignal.any([serveOptions.signal, context.signal]) : context.signal;
      await options.plugins.ready();
      serving = true;
      options.imports.start();
      const runFile = join(context.paths.runDir, `stdio-${process.pid}.json`);
      try {
        await options.dashboard.start();
        admin = await openAdminOnly(adminOnly, runFile, 'stdio');
        const toolNames = serveOptions.toolNames ?? context.settings.get().mcp.toolNames;
        const connection = await serveStdio({
          invoker: context.pipeline.invoker,
          serverInfo,
          experimentalCapabilities: { [HOST_MARKER_CAPABILITY]: { instance: context.hostId } },
          signal,
          toolNames,
          onError: (error) => log('error', `stdio: ${error.message}`),
        });
        fileLog('info', `capnode ${context.version} serving MCP over stdio (pid ${process.pid})`);
        context.announce();
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
    async close() {
      await admin?.close();
    },
  };
}
