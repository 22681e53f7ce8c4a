import { WebSocketServer, type WebSocket } from 'ws';

/**
 * An in-process stand-in for the gateway, for unit tests of faults the real gateway cannot be made to
 * produce (malformed frames, half-open sockets, lost ticks, tiny payload limits). Loopback, port 0.
 * Interoperability itself is tested against the real gateway (tests/gateway).
 */
export interface FakeConnection {
  readonly socket: WebSocket;
  /** Every text frame the client sent, parsed. */
  readonly received: Array<Record<string, any>>;
  send(frame: unknown): void;
  sendRaw(data: string | Buffer): void;
  challenge(nonce?: string): void;
  /** Resolves with the next received frame matching `match` (or an earlier unclaimed one). */
  next(match: (frame: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** Sends the challenge, waits for `connect` and answers hello-ok with `policy` overrides. */
  handshake(options?: { readonly policy?: Partial<{ maxPayload: number; tickIntervalMs: number }>; readonly deviceToken?: string; readonly pluginSurfaceUrls?: Record<string, string> }): Promise<Record<string, any>>;
  respond(id: string, payload: unknown): void;
  fail(id: string, error: Record<string, unknown>): void;
  readonly closed: Promise<{ code: number; reason: string }>;
}

export interface FakeGateway {
  readonly url: string;
  readonly connections: FakeConnection[];
  /** Resolves with connection number `index` (0-based) once it exists. */
  connection(index: number, timeoutMs?: number): Promise<FakeConnection>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startFakeGateway(onConnection: (connection: FakeConnection) => void | Promise<void> = (c) => void c.handshake()): Promise<FakeGateway> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const connections: FakeConnection[] = [];
  const waiters: Array<() => void> = [];
  server.on('connection', (socket) => {
    const received: Array<Record<string, any>> = [];
    const claimed = new Set<Record<string, any>>();
    const matchers: Array<{ match: (frame: Record<string, any>) => boolean; resolve: (frame: Record<string, any>) => void }> = [];
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let frame: Record<string, any>;
      try {
        frame = JSON.parse(String(data)) as Record<string, any>;
      } catch {
        return;
      }
      received.push(frame);
      const matcher = matchers.find((m) => m.match(frame));
      if (matcher) {
        matchers.splice(matchers.indexOf(matcher), 1);
        claimed.add(frame);
        matcher.resolve(frame);
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
    const connection: FakeConnection = {
      socket,
      received,
      closed,
      send: (frame) => socket.send(JSON.stringify(frame)),
      sendRaw: (data) => socket.send(data),
      challenge: (nonce = `nonce-${connections.indexOf(connection)}`) => socket.send(JSON.stringify({ type: 'event', event: 'connect.challenge', payload: { nonce, ts: Date.now() } })),
      next(match, timeoutMs = 10_000) {
        const earlier = received.find((frame) => !claimed.has(frame) && match(frame));
        if (earlier) {
          claimed.add(earlier);
          return Promise.resolve(earlier);
        }
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('fake gateway: no matching frame')), timeoutMs);
          matchers.push({
            match,
            resolve: (frame) => {
              clearTimeout(timer);
              resolve(frame);
            },
          });
        });
      },
      async handshake(options = {}) {
        connection.challenge();
        const connect = await connection.next((frame) => frame.type === 'req' && frame.method === 'connect');
        connection.respond(connect.id, {
          type: 'hello-ok',
          protocol: 4,
          server: { version: 'fake', connId: `conn-${connections.indexOf(connection)}` },
          features: { methods: [], events: [] },
          snapshot: {},
          auth: { role: connect.params.role, scopes: connect.params.scopes ?? [], ...(options.deviceToken ? { deviceToken: options.deviceToken } : {}) },
          policy: { maxPayload: 1024 * 1024, maxBufferedBytes: 2 * 1024 * 1024, tickIntervalMs: 30_000, ...options.policy },
          ...(options.pluginSurfaceUrls ? { pluginSurfaceUrls: options.pluginSurfaceUrls } : {}),
        });
        return connect;
      },
      respond: (id, payload) => socket.send(JSON.stringify({ type: 'res', id, ok: true, payload })),
      fail: (id, error) => socket.send(JSON.stringify({ type: 'res', id, ok: false, error })),
    };
    connections.push(connection);
    for (const wake of waiters.splice(0)) wake();
    void Promise.resolve(onConnection(connection)).catch(() => {});
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('fake gateway has no address');
  const close = async () => {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `ws://127.0.0.1:${address.port}`,
    connections,
    async connection(index, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!connections[index]) {
        if (Date.now() > deadline) throw new Error(`fake gateway: connection ${index} never came`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return connections[index]!;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
