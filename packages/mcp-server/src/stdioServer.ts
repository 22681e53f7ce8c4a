import type { Readable, Writable } from 'node:stream';
import type { Invoker, ToolNameStyle } from '@capnode/capabilities';
import type { Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { StdioServerTransport, serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { createCapnodeMcp } from './capnodeMcp.js';

export interface ServeStdioOptions {
  readonly invoker: Invoker;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  readonly instructions?: string;
  /** How `tools/list` spells command names: `dotted` (default) or `underscore` (`.` → `_`); calls accept both. */
  readonly toolNames?: ToolNameStyle;
  /** Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Carries protocol messages only. Default `process.stdout`. */
  readonly stdout?: Writable;
  /** Closes the connection when aborted. */
  readonly signal?: AbortSignal;
  /** Diagnostics; default writes one line per error to stderr (never stdout). */
  readonly onError?: (error: Error) => void;
  /**
   * Experimental capabilities to declare on initialize, e.g. `{ 'claude/channel': {} }` for a
   * channel server that sends `notifications/claude/channel`.
   */
  readonly experimentalCapabilities?: Readonly<Record<string, Record<string, unknown>>>;
  /**
   * Handlers for custom (non-spec) notifications from the client, by method, e.g.
   * `notifications/claude/channel/permission_request`. They get the notification's params object;
   * a handler's error goes to `onError`.
   */
  readonly notificationHandlers?: Readonly<Record<string, (params: Record<string, unknown>) => void | Promise<void>>>;
}

/** A stdio MCP connection. */
export interface StdioServer {
  /** Settles when the connection ended: the client closed stdin, or `close()` was called. */
  readonly closed: Promise<void>;
  /**
   * Sends a custom notification (e.g. `notifications/claude/channel`) to the connected client.
   * Rejects before the client's first message or after the connection ended.
   */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  /** Ends the connection: aborts in-flight calls and stops reading stdin. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

class ObservedStdioTransport extends StdioServerTransport {
  readonly #onClosed: () => void;

  constructor(stdin: Readable | undefined, stdout: Writable | undefined, onClosed: () => void) {
    super(stdin, stdout);
    this.#onClosed = onClosed;
  }

  override async close(): Promise<void> {
    await super.close();
    this.#onClosed();
  }
}

function writeErrorToStderr(error: Error): void {
  process.stderr.write(`capnode mcp: ${error.message}\n`);
}

/**
 * Serves the registry over stdio with the MCP SDK's stdio transport and era handling (initialize-based
 * or 2026-07-28). stdout carries protocol messages only; diagnostics go to stderr. The connection
 * receives `notifications/tools/list_changed` when the registry changes.
 *
 * @example
 * const server = await serveStdio({ invoker });
 * await server.closed; // the client went away
 */
export async function serveStdio(options: ServeStdioOptions): Promise<StdioServer> {
  options.signal?.throwIfAborted();
  const onError = options.onError ?? writeErrorToStderr;
  const mcp = createCapnodeMcp({
    invoker: options.invoker,
    onError,
    ...(options.serverInfo === undefined ? {} : { serverInfo: options.serverInfo }),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    ...(options.experimentalCapabilities === undefined ? {} : { experimentalCapabilities: options.experimentalCapabilities }),
  });
  let markClosed!: () => void;
  const transportClosed = new Promise<void>((resolve) => {
    markClosed = () => {
      ended = true;
      resolve();
    };
  });
  const transport = new ObservedStdioTransport(options.stdin, options.stdout, () => markClosed());
  const paramsSchema = z.record(z.string(), z.unknown());
  let current: Server | undefined;
  let ended = false;
  const handle = sdkServeStdio(
    () => {
      const server = mcp.createServer({ transport: 'mcp-stdio', ...(options.toolNames === undefined ? {} : { toolNames: options.toolNames }) });
      for (const [method, handler] of Object.entries(options.notificationHandlers ?? {})) {
        server.setNotificationHandler(method, { params: paramsSchema }, async (params) => {
          try {
            await handler(params);
          } catch (error) {
            onError(error instanceof Error ? error : new Error(String(error)));
          }
        });
      }
      current = server;
      return server;
    },
    { transport, onerror: onError },
  );

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      ended = true;
      await handle.close().catch(onError);
      await mcp.close();
    })();
    return closing;
  };
  const onAbort = (): void => {
    void close();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const closed = transportClosed.then(async () => {
    options.signal?.removeEventListener('abort', onAbort);
    await close();
  });

  const notify = async (method: string, params: Record<string, unknown>): Promise<void> => {
    if (ended) throw new Error('the stdio connection has ended');
    if (!current) throw new Error('no MCP client has connected yet');
    await current.notification({ method, params });
  };

  return { closed, notify, close, [Symbol.asyncDispose]: close };
}
