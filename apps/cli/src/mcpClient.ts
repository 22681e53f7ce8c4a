import { join } from 'node:path';
import type { McpClientSetup, SettingsStore } from '@capnode/host/settings';
import type { Logger, McpConfig, McpRuntime } from '@capnode/mcp-client';
import type { Context } from './context.js';
import { CliError, hostFailure } from './errors.js';
import { openCliPipeline } from './pipeline.js';
import { version } from './version.js';

type SettingsModule = typeof import('@capnode/host/settings');

/** The host's settings module (zod, the MCP client config schema); loaded only by commands that need it. */
async function loadSettingsModule(): Promise<SettingsModule> {
  return import('@capnode/host/settings');
}

/** Opens `settings.json` of the config directory (a bad file is a CLI error naming the key). */
export async function openSettings(context: Context): Promise<{ module: SettingsModule; store: SettingsStore; setup: McpClientSetup }> {
  const module = await loadSettingsModule();
  try {
    const store = module.createSettingsStore(context.paths.settings);
    return { module, store, setup: module.resolveMcpClientSettings(store.get()) };
  } catch (error) {
    hostFailure(error, module);
  }
}

/** Runtime log lines: only with `CAPNODE_DEBUG` (the commands print each server's diagnostic themselves). */
function runtimeLogger(context: Context): Logger {
  const debug = Boolean(context.env.CAPNODE_DEBUG);
  const write = (level: string) => (message: string) => {
    if (debug) context.err(`capnode ${level}: ${message}`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warning'), error: write('error') };
}

/** An abort signal for Ctrl-C while the CLI connects or calls servers itself; `dispose` removes the handler. */
export function interruptSignal(context: Context, what: string): { readonly signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    context.err(`capnode: interrupted, stopping ${what}… (Ctrl-C again to quit at once)`);
    controller.abort(new CliError('interrupted', 'interrupted'));
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}

export interface LocalRuntimeOptions {
  readonly config: McpConfig;
  /** The agent whose risk profile applies; `undefined` for none (every tool, nothing asked). */
  readonly agent?: string;
  readonly allServers: boolean;
  readonly signal: AbortSignal;
}

/**
 * Connects MCP servers from this process (no host involved), through the host's pipeline built
 * here ({@link openCliPipeline}): the risk profile decides which calls need approval, those are
 * asked at the terminal (or refused when there is none), and every call is written to `audit.log`.
 * Binary results are saved under `<config dir>/uploads/`. Closing the runtime closes the pipeline.
 */
export async function openLocalRuntime(context: Context, options: LocalRuntimeOptions): Promise<McpRuntime> {
  const [{ createMcpRuntime }, { requestToolApproval }] = await Promise.all([import('@capnode/mcp-client/node'), import('@capnode/host')]);
  const cli = await openCliPipeline(context, { what: 'capnode call' });
  const { approvals, invoker } = cli.pipeline;
  let runtime: McpRuntime;
  try {
    runtime = await createMcpRuntime(options.config, {
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      allServers: options.allServers,
      invoker,
      approve: async (request) => (await requestToolApproval(approvals, request)).decision !== 'deny',
      logger: runtimeLogger(context),
      signal: options.signal,
      workspace: context.paths.home,
      // Tokens from `capnode servers login`; no browser here: a missing one is `auth_required`.
      oauth: { dir: join(context.paths.home, 'oauth') },
      clientInfo: { name: 'capnode-cli', version: version() },
    });
  } catch (error) {
    await cli.close();
    if (options.signal.aborted) throw new CliError('interrupted', 'interrupted', { cause: error });
    throw error;
  }
  const closeRuntime = runtime.close.bind(runtime);
  const close = async () => {
    await closeRuntime();
    await cli.close();
  };
  return Object.assign(runtime, { close, [Symbol.asyncDispose]: close });
}
