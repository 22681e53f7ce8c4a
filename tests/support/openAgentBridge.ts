import type { IncomingHttpHeaders } from 'node:http';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import { WebSocketServer, type WebSocket } from 'ws';
import { eventually } from './poll.js';

/** One frame as the bridge received it, with the connection it came on (1, 2, …). */
export interface BridgeFrame {
  readonly connection: number;
  readonly frame: Record<string, unknown>;
}

/** A connection the bridge accepted: its handshake headers, how it ended. */
export interface BridgeConnection {
  readonly index: number;
  readonly headers: IncomingHttpHeaders;
  readonly socket: WebSocket;
  closed?: { readonly code: number; readonly reason: string };
}

export interface OpenAgentBridgeOptions {
  readonly deviceId?: string;
  readonly accountId?: string;
  readonly networkId?: string;
  /** Changes the hello_ack the bridge sends (e.g. another device id, `accepted: false`); `undefined` sends none. */
  readonly ack?: (ack: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** Largest frame the bridge accepts; default 64 MiB. */
  readonly maxPayload?: number;
}

/**
 * The server side of OpenAgent's `client-capabilities/1` on a loopback `ws` server, speaking the frames
 * as the spec gives them: it acknowledges the hello, answers heartbeats, and lets a test send
 * `client_tool_call` / `client_tool_cancel` and read every frame the client sent.
 */
export interface OpenAgentBridge extends AsyncDisposable {
  readonly url: string;
  readonly frames: BridgeFrame[];
  readonly connections: BridgeConnection[];
  /** Stops (or resumes) answering heartbeats. */
  heartbeatAcks: boolean;
  /** The last open connection's socket. */
  current(): BridgeConnection | undefined;
  /** Resolves with the hello of the `n`th connection (1-based), once registered (acked). */
  hello(n?: number): Promise<Record<string, unknown>>;
  /** Sends a `client_tool_call` for `server`/`tool` with `args` on the current connection; fills the spec's fields (correct hash, 30 s deadline). */
  call(tool: string, args: Record<string, unknown>, fields?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Sends any frame on the current connection. */
  send(frame: Record<string, unknown>): void;
  /** The `client_tool_result` of `callId` (waits). */
  result(callId: string, options?: { readonly timeoutMs?: number }): Promise<Record<string, unknown>>;
  /** Frames of `type` received so far. */
  framesOf(type: string): Record<string, unknown>[];
  close(): Promise<void>;
}

let nextCall = 0;

export async function startOpenAgentBridge(options: OpenAgentBridgeOptions = {}): Promise<OpenAgentBridge> {
  const deviceId = options.deviceId ?? 'device-1';
  const accountId = options.accountId ?? 'account-1';
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws/capabilities', maxPayload: options.maxPayload ?? 64 * 1024 * 1024 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address() as { port: number };
  const frames: BridgeFrame[] = [];
  const connections: BridgeConnection[] = [];
  const hellos = new Map<number, Record<string, unknown>>();
  const bridge: OpenAgentBridge = {
    url: `ws://127.0.0.1:${address.port}/ws/capabilities`,
    frames,
    connections,
    heartbeatAcks: true,
    current: () => connections.filter((connection) => !connection.closed).at(-1),
    hello: (n) => eventually(() => hellos.get(n ?? connections.length), { what: `hello ${n ?? 'of the last connection'}`, timeoutMs: 20_000 }),
    async call(tool, args, fields = {}) {
      nextCall += 1;
      const hello = await bridge.hello();
      const frame = {
        type: 'client_tool_call',
        call_id: `call-${nextCall}`,
        generation: hello.generation,
        server: 'capnode',
        tool,
        args,
        deadline_ms: 30_000,
        session_id: null,
        account_id: accountId,
        ...(options.networkId ? { network_id: options.networkId } : {}),
        idempotency_key: `call-${nextCall}`,
        arguments_sha256: openAgentArgumentsSha256(args),
        ...fields,
      };
      bridge.send(frame);
      return frame;
    },
    send(frame) {
      const connection = bridge.current();
      if (!connection) throw new Error('no open capability connection');
      connection.socket.send(JSON.stringify(frame));
    },
    result: (callId, waitOptions = {}) =>
      eventually(() => frames.find((entry) => entry.frame.type === 'client_tool_result' && entry.frame.call_id === callId)?.frame, {
        what: `the result of ${callId}`,
        timeoutMs: waitOptions.timeoutMs ?? 20_000,
      }),
    framesOf: (type) => frames.filter((entry) => entry.frame.type === type).map((entry) => entry.frame),
    async close() {
      for (const connection of connections) connection.socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    [Symbol.asyncDispose]: () => bridge.close(),
  };
  server.on('connection', (socket, request) => {
    const connection: BridgeConnection = { index: connections.length + 1, headers: request.headers, socket };
    connections.push(connection);
    socket.on('close', (code, reason) => {
      connection.closed = { code, reason: reason.toString('utf8') };
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      frames.push({ connection: connection.index, frame });
      if (frame.type === 'capability_hello') {
        const ack = {
          type: 'capability_hello_ack',
          protocol: frame.protocol,
          device_id: deviceId,
          account_id: accountId,
          ...(options.networkId ? { network_id: options.networkId } : {}),
          client_instance_id: frame.client_instance_id,
          generation: frame.generation,
          accepted: true,
        };
        const sent = options.ack ? options.ack({ ...ack }) : ack;
        if (sent === undefined) hellos.set(connection.index, frame);
        else socket.send(JSON.stringify(sent), () => hellos.set(connection.index, frame));
      } else if (frame.type === 'capability_heartbeat' && bridge.heartbeatAcks) {
        socket.send(JSON.stringify({ type: 'capability_heartbeat_ack', generation: frame.generation, ts_ms: Date.now() }));
      }
    });
  });
  return bridge;
}
