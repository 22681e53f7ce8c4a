/** What a transport reports to the gateway client. Exactly one `onClose` ends every socket. */
export interface GatewaySocketHandlers {
  onOpen(): void;
  /** A text frame; `text` is `undefined` for a binary frame (not part of the protocol). `bytes` is its size. */
  onMessage(text: string | undefined, bytes: number): void;
  onClose(code: number, reason: string): void;
  /** A transport error; `onClose` follows. */
  onError(error: Error): void;
}

/** The little of a WebSocket the client needs, so the client core stays runtime-neutral. */
export interface GatewaySocket {
  /** Sends one text frame; throws when the socket is not open. */
  send(text: string): void;
  /** Starts the closing handshake. */
  close(code?: number, reason?: string): void;
  /** Drops the connection at once (half-open or unresponsive peers). */
  terminate(): void;
  /** Bytes queued but not yet sent. */
  readonly bufferedAmount: number;
}

/** Opens a socket to `url`; `createWsSocketFactory` from `@capnode/gateway-bridge/node` gives one over `ws`. */
export type GatewaySocketFactory = (url: string, handlers: GatewaySocketHandlers) => GatewaySocket;
