import { join } from 'node:path';
import type { McpClientSetup, SettingsStore } from '@capnode/host/settings';
import type { Logger, McpConfig, McpRuntime } from '@capnode/mcp-client';
import type { Context } from './context.js';
import { CliError, hostFailure } from './errors.js';
import { version } from './version.js';

type SettingsModule = typeof import('@capnode/host/settings');

/** The host's settings module (zod, the MCP client config schema); loaded only by commands that need it. */
export async function loadSettingsModule(): Promise<SettingsModule> {
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
export function runtimeLogger(context: Context): Logger {
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
 * Connects MCP servers from this process (no host involved). Calls need no approval: the person
 * running the command asked for them. Binary results are saved under `<config dir>/uploads/`.
 */
export async function openLocalRuntime(context: Context, options: LocalRuntimeOptions): Promise<McpRuntime> {
  const { createMcpRuntime } = await import('@capnode/mcp-client/node');
  try {
    return await createMcpRuntime(options.config, {
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      allServers: options.allServers,
      approve: () => true,
      logger: runtimeLogger(context),
      signal: options.signal,
      workspace: context.paths.home,
      // Tokens from `capnode servers login`; no browser here: a missing one is `auth_required`.
      oauth: { dir: join(context.paths.home, 'oauth') },
      clientInfo: { name: 'capnode-cli', version: version() },
    });
  } catch (error) {
    if (options.signal.aborted) throw new CliError('interrupted', 'interrupted', { cause: error });
    throw error;
  }
}
