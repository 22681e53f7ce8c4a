// capnode target: the production HTTP stack (startHttpServer with a bearer token, every gate, the
// invocation pipeline) serving `bench.echo`, in a process tuned as `capnode serve` tunes its own
// (limitYoungGenerationGrowth; CAPNODE_BENCH_UNTUNED=1 leaves V8's defaults).
// Prints `READY {"url":...,"token":...}` on stdout.
import { randomBytes } from 'node:crypto';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { limitYoungGenerationGrowth, startHttpServer } from '@capnode/mcp-server/node';
import { benchCapability } from '../fixtures/echo.mjs';

if (process.env.CAPNODE_BENCH_UNTUNED !== '1') limitYoungGenerationGrowth();
const token = randomBytes(32).toString('base64url');
const invoker = createInvoker({
  registry: createRegistry([benchCapability]),
  onInternalError: (error) => console.error('internal error:', error),
});
const server = await startHttpServer({ invoker, host: '127.0.0.1', port: 0, token });
console.log(`READY ${JSON.stringify({ url: server.url, token })}`);
let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop).resume();
