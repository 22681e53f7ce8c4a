import type { ToolNameStyle } from '@capnode/capabilities';
import type { AbortHook } from '@capnode/toolkit/http';

/**
 * One parsed JSON-RPC POST, as whichever HTTP layer received it describes it: the Node layer reads
 * headers straight off `IncomingMessage` and builds no web `Request` unless the SDK's per-request
 * entry needs one.
 */
export interface PostInbound {
  readonly body: unknown;
  /** The body's text, so large numeric ids are echoed and matched exactly. */
  readonly rawBody: string | undefined;
  /** Aborts the calls this request started (deadline, client gone, shutdown). */
  readonly lifetime: AbortHook | undefined;
  /** The tool name style the request selected (`?toolNames=` or the `Capnode-Tool-Names` header), if any. */
  readonly toolNames?: ToolNameStyle | undefined;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The web request handed to the SDK's per-request entry; `withSignal` when it must see disconnects. */
  webRequest(withSignal: boolean): Request;
}

export function acceptsEventStream(inbound: PostInbound): boolean {
  return inbound.header('accept')?.includes('text/event-stream') ?? false;
}
