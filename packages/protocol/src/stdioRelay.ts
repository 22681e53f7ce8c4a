/**
 * The `initialize` header by which a stdio relay (`capnode mcp`, `capnode-tray mcp` attached to a running
 * host) tells the host that the session carries a stdio client, so its calls are audited as `mcp-stdio`.
 * Its value is `Bearer <admin token>`: a client without the host's admin token cannot claim it.
 */
export const STDIO_RELAY_HEADER = 'x-capnode-stdio-relay';
