import { describe, expect, it } from 'vitest';
import { ProcessStdioTransport, STDIO_CLOSE_GRACE_MS } from './stdioTransport.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A transport to `node -e script` (no env, 1 MB lines, a silent logger, no scrubbing) whose transport errors are ignored. */
function nodeScriptTransport(server: string, script: string): ProcessStdioTransport {
  const transport = new ProcessStdioTransport({ server, command: process.execPath, args: ['-e', script], env: {}, maxLineBytes: 1_000_000, logger, scrub: (text) => text });
  transport.onerror = () => {};
  return transport;
}

describe('ProcessStdioTransport', () => {
  it('close() resolves only after the child has closed, its group ended: its last unterminated stderr line is already logged', async () => {
    const lines: string[] = [];
    const transport = new ProcessStdioTransport({
      server: 'last',
      command: process.execPath,
      // A grandchild in the group holds stderr open past the child's exit, so `close` comes only after close() ends the group.
      args: ['-e', 'require("node:child_process").spawn("sleep", ["30"], { stdio: ["ignore", "ignore", "inherit"] }); process.stderr.write("last words"); process.stdin.resume(); process.stdin.on("end", () => process.exit(0))'],
      env: {},
      maxLineBytes: 1_000_000,
      logger: { ...logger, debug: (line: string) => void lines.push(line) },
      scrub: (text) => text,
    });
    let closed = 0;
    transport.onclose = () => void (closed += 1);
    await transport.start();
    // The partial line is held until a newline or the child's close.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines).toEqual([]);
    await transport.close();
    expect(lines).toEqual(['[last stderr] last words']);
    expect(closed).toBe(1);
  });

  it("a write to a server that has closed its stdin fails with the server's exit status, not EPIPE", async () => {
    // Closes stdin, says so, and exits a little later: writes in between get EPIPE.
    const transport = nodeScriptTransport('gone', 'require("node:fs").closeSync(0); console.log("closed"); setTimeout(() => process.exit(3), 300)');
    await transport.start();
    // Wait until the child has closed its stdin (its stdout line is not JSON, so it is only logged).
    await new Promise((resolve) => setTimeout(resolve, 150));
    let failure: unknown;
    for (let i = 0; i < 20 && failure === undefined; i += 1) {
      await transport.send({ jsonrpc: '2.0', id: i, method: 'ping' }).catch((error: unknown) => (failure = error));
    }
    expect(String(failure)).toMatch(/server process exited \(code 3\)/);
    await transport.close();
  });

  it('a notification is written with the next request, in order, or on the next turn; after a failed write, sends fail with the exit status', async () => {
    // Echoes each line's method back as a response to the next request id it sees, and exits 3 on "bye".
    const transport = nodeScriptTransport(
      'echo',
      `let seen = []; require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
        const m = JSON.parse(line); seen.push(m.method);
        if (m.method === 'bye') { require('node:fs').closeSync(0); setTimeout(() => process.exit(3), 200); return; }
        if (m.id !== undefined) { console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { seen } })); seen = []; }
      });`,
    );
    const messages: unknown[] = [];
    transport.onmessage = (message) => void messages.push(message);
    await transport.start();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await transport.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    for (let i = 0; i < 100 && messages.length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, result: { seen: ['notifications/initialized', 'tools/list'] } },
      { jsonrpc: '2.0', id: 2, result: { seen: ['notifications/roots/list_changed', 'ping'] } },
    ]);
    await transport.send({ jsonrpc: '2.0', method: 'bye' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let failure: unknown;
    for (let i = 0; i < 20 && failure === undefined; i += 1) {
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch((error: unknown) => (failure = error));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(String(failure)).toMatch(/server process exited \(code 3\)/);
    await transport.close();
  });

  it('close() right after a notification writes it before EOF, and ends a server that ignores EOF and SIGTERM', async () => {
    // Echoes each line's method as a notification, ignores stdin EOF and SIGTERM: only SIGKILL ends it.
    const transport = nodeScriptTransport(
      'stubborn',
      `process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);
      console.log(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/ready' }));
      require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
        console.log(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { got: JSON.parse(line).method } }));
      });`,
    );
    const messages: unknown[] = [];
    transport.onmessage = (message) => void messages.push(message);
    let closed = 0;
    transport.onclose = () => void (closed += 1);
    await transport.start();
    const pid = transport.pid!;
    // Its SIGTERM handler is installed once it says it is ready.
    for (let i = 0; i < 500 && messages.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    // Same turn: the notification is still queued when close() starts.
    await transport.close();
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/ready' },
      { jsonrpc: '2.0', method: 'notifications/message', params: { got: 'notifications/cancelled' } },
    ]);
    expect(transport.exitStatus).toBe('SIGKILL');
    expect(() => process.kill(pid, 0)).toThrow();
    expect(closed).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toThrow(/not connected/);
  }, 4 * STDIO_CLOSE_GRACE_MS + 5_000);
});
