import type { Invoker, ToolNameStyle } from '@capnode/capabilities';
import type { Server } from '@modelcontextprotocol/server';
import { createMcpCore } from './internal/mcpCore.js';
import { supportedProtocolVersions as versions } from './internal/versions.js';

/** Every protocol revision served: the initialize-based ones, then the per-request lifecycle (2026-07-28). */
export const supportedProtocolVersions: readonly string[] = versions;

export interface CapnodeMcpOptions {
  /** The single entry to command execution; every `tools/call` goes through `invoker.invoke`. */
  readonly invoker: Invoker;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Optional `instructions` sent to clients on initialize / discover. */
  readonly instructions?: string;
  /**
   * Experimental capabilities every server instance declares, e.g. capnode's host marker
   * `{ 'capnode/host': { instance } }` that lets a capnode MCP client recognise its own host.
   */
  readonly experimentalCapabilities?: Readonly<Record<string, Record<string, unknown>>>;
  /** Largest body {@link CapnodeMcp.fetch} reads itself (not applied to `parsedBody`). Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * How `tools/list` spells command names for a connection that selects none: `dotted` (default, as
   * registered) or `underscore` (`.` → `_`, for OpenAI-style harnesses). An HTTP request selects its
   * own with `?toolNames=dotted|underscore` on the URL or a `Capnode-Tool-Names` header; `tools/call`
   * accepts both spellings on every connection.
   */
  readonly toolNames?: ToolNameStyle;
  /** Out-of-band errors: SDK transport errors, unexpected exceptions. Reporting only. */
  readonly onError?: (error: Error) => void;
}

export interface McpFetchOptions {
  /** The JSON body, already parsed; the Content-Type check and body read are then skipped. */
  readonly parsedBody?: unknown;
  /** The body's text, so large numeric ids are echoed and matched exactly. */
  readonly rawBody?: string;
  /** Aborts every capability call this request started (deadline, client gone, shutdown). */
  readonly signal?: AbortSignal;
}

export interface CreateServerOptions {
  /** Recorded on every invocation; `mcp-stdio` unless given. */
  readonly transport?: 'mcp-stdio' | 'mcp-http';
  /** This connection's tool name style; the server's `toolNames` unless given. */
  readonly toolNames?: ToolNameStyle;
}

/**
 * The MCP face of a capability registry: SDK server instances wired to the invocation pipeline, and a
 * sessionless HTTP handler serving both protocol eras on one URL.
 */
export interface CapnodeMcp {
  /**
   * Serves one HTTP request (web-standard `Request` → `Response`), without sessions.
   *
   * `POST` carries JSON-RPC: `initialize`-era traffic (2024-11-05 … 2025-11-25) is served by one
   * long-lived SDK server, 2026-07-28 per-request traffic (`server/discover`, `_meta` envelope) by the
   * SDK's own per-request handler. Answers are plain JSON unless the client accepts `text/event-stream`
   * and a call emits progress or logs first. `GET` and `DELETE` answer 405: no session, no stream.
   * `?toolNames=dotted|underscore` or a `Capnode-Tool-Names` header selects the request's tool name
   * style (another value: 400).
   * Put transport security (loopback, Origin, Host, bearer) in front; this handler performs none.
   */
  fetch(request: Request, options?: McpFetchOptions): Promise<Response>;
  /**
   * A fresh SDK `Server` for one connection (stdio or any SDK transport). It advertises
   * `tools.listChanged` and receives `notifications/tools/list_changed` while connected.
   */
  createServer(options?: CreateServerOptions): Server;
  /** Calls not answered yet on the sessionless HTTP path. */
  readonly inFlight: number;
  /** Aborts in-flight calls, closes every server instance and stops watching the registry. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Wires a capability registry (through its invoker) to the MCP SDK v2.
 *
 * The SDK owns protocol messages: initialize and version negotiation, `server/discover`, ping,
 * logging/setLevel, framing and error codes. capnode owns policy and execution: `tools/list` reads the
 * registry live (cached by `registry.version`), `tools/call` runs through `invoker.invoke`.
 *
 * @example
 * const mcp = createCapnodeMcp({ invoker });
 * export default { fetch: (request: Request) => mcp.fetch(request) }; // behind your own gates
 */
export function createCapnodeMcp(options: CapnodeMcpOptions): CapnodeMcp {
  return createMcpCore(options).mcp;
}

