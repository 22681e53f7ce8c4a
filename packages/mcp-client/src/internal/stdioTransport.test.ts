import { describe, expect, it } from 'vitest';
import { ProcessStdioTransport } from './stdioTransport.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };

describe('ProcessStdioTransport', () => {
  it("a write to a server that has closed its stdin fails with the server's exit status, not EPIPE", async () => {
    const transport = new ProcessStdioTransport({
      server: 'gone',
      command: process.execPath,
      // Closes stdin, says so, and exits a little later: writes in between get EPIPE.
      args: ['-e', 'require("node:fs").closeSync(0); console.log("closed"); setTimeout(() => process.exit(3), 300)'],
      env: {},
      maxLineBytes: 1_000_000,
      logger,
      scrub: (text) => text,
    });
    transport.onerror = () => {};
    await transport.start();
    // Wait until the child has closed its stdin (its stdout line is not JSON, so it is only logged).
    await new Promise((resolve) => setTimeout(resolve, 150));
    let failure: unknown;
    for (let i = 0; i < 20 && failure === undefined; i += 1) {
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch((error: unknown) => (failure = error));
    }
    expect(String(failure)).toMatch(/server process exited \(code 3\)/);
    await transport.close();
  });
});
