import type { Readable, Writable } from 'node:stream';
import type { Invoker } from '@capnode/capabilities';
import { StdioServerTransport, serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { createCapnodeMcp } from './capnodeMcp.js';

export interface ServeStdioOptions {
  readonly invoker: Invoker;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  readonly instructions?: string;
  /** Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Carries protocol messages only. Default `process.stdout`. */
  readonly stdout?: Writable;
  /** Closes the connection when aborted. */
  readonly signal?: AbortSignal;
  /** Diagnostics; default writes one line per error to stderr (never stdout). */
  readonly onError?: (error: Error) => void;
}

/** A stdio MCP connection. */
export interface StdioServer {
  /** Settles when the connection ended: the client closed stdin, or `close()` was called. */
  readonly closed: Promise<void>;
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
  });
  let markClosed!: () => void;
  const transportClosed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const transport = new ObservedStdioTransport(options.stdin, options.stdout, () => markClosed());
  const handle = sdkServeStdio(() => mcp.createServer({ transport: 'mcp-stdio' }), { transport, onerror: onError });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
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

  return { closed, close, [Symbol.asyncDispose]: close };
}
