import WebSocket from 'ws';
import type { GatewaySocketFactory } from './socket.js';

/** Hard cap on one incoming frame, above any gateway's `policy.maxPayload` seen (25 MiB). */
const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface WsSocketFactoryOptions {
  /** Largest incoming frame `ws` buffers before closing with 1009. Default 64 MiB. */
  readonly maxPayload?: number;
  /** Deadline of the WebSocket opening handshake. Default 15 000 ms. */
  readonly handshakeTimeoutMs?: number;
}

/** A {@link GatewaySocketFactory} over the `ws` package (no compression, bounded frames). */
export function createWsSocketFactory(options: WsSocketFactoryOptions = {}): GatewaySocketFactory {
  return (url, handlers) => {
    const ws = new WebSocket(url, {
      maxPayload: options.maxPayload ?? DEFAULT_MAX_FRAME_BYTES,
      handshakeTimeout: options.handshakeTimeoutMs ?? 15_000,
      perMessageDeflate: false,
    });
    ws.on('open', () => handlers.onOpen());
    ws.on('message', (data, isBinary) => {
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      handlers.onMessage(isBinary ? undefined : buffer.toString('utf8'), buffer.length);
    });
    ws.on('close', (code, reason) => handlers.onClose(code, reason.toString('utf8')));
    ws.on('error', (error) => handlers.onError(error));
    return {
      send: (text) => ws.send(text),
      close: (code, reason) => ws.close(code, reason),
      terminate: () => ws.terminate(),
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
    };
  };
}

/** The platform and device family the gateway's command policy expects for this OS. */
export function gatewayPlatform(platform: NodeJS.Platform = process.platform): { readonly platform: string; readonly deviceFamily: string } {
  switch (platform) {
    case 'linux':
      return { platform: 'linux', deviceFamily: 'Linux' };
    case 'darwin':
      return { platform: 'macos', deviceFamily: 'Mac' };
    case 'win32':
      return { platform: 'windows', deviceFamily: 'Windows' };
    default:
      return { platform, deviceFamily: platform };
  }
}
