// Pins what the runtime relies on in @modelcontextprotocol/client beyond its types (see sdkSeam.ts):
// an SDK upgrade that changes any of it fails here instead of silently degrading the runtime.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Client, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, expect, test } from 'vitest';
import { httpStatusOf } from './sdkSeam.js';

const require = createRequire(import.meta.url);
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

function answerWith(status: number): Promise<URL> {
  server = createServer((request, response) => {
    request.resume();
    response.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end('no');
  });
  return new Promise((resolve) => server!.listen(0, '127.0.0.1', () => resolve(new URL(`http://127.0.0.1:${(server!.address() as { port: number }).port}/mcp`))));
}

test('the installed SDK is the exactly pinned one', () => {
  const manifest = require('../../package.json') as { dependencies: Record<string, string> };
  expect(manifest.dependencies['@modelcontextprotocol/client']).toMatch(/^\d+\.\d+\.\d+$/);
  expect((JSON.parse(readFileSync(new URL('../../node_modules/@modelcontextprotocol/client/package.json', import.meta.url), 'utf8')) as { version: string }).version).toBe(manifest.dependencies['@modelcontextprotocol/client']);
});

test.each([404, 405])('a Streamable HTTP POST answered %i fails with an SdkHttpError carrying that status (the SSE fallback and session recycling read it)', async (status) => {
  const url = await answerWith(status);
  const client = new Client({ name: 'contract', version: '0.0.0' });
  const error = await client.connect(new StreamableHTTPClientTransport(url)).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  await client.close();
  expect(error).toBeInstanceOf(SdkError);
  expect(httpStatusOf(error)).toBe(status);
  expect(httpStatusOf(new Error('plain'))).toBeUndefined();
});

test('the error codes the runtime branches on exist', () => {
  expect(SdkErrorCode.RequestTimeout).toBeTypeOf('string');
  expect(SdkErrorCode.ConnectionClosed).toBeTypeOf('string');
  expect(SdkErrorCode.RequestTimeout).not.toBe(SdkErrorCode.ConnectionClosed);
});
