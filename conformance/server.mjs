#!/usr/bin/env node
// The conformance fixture: the tools the suite's server scenarios call, written as one capnode
// capability and served through the production HTTP stack (startHttpServer: every gate, the
// invocation pipeline, the SDK owning protocol messages). Auth is switched off only through the
// explicit `token: { disabled: true }` option, because the suite's client sends no bearer token.
//
// Usage: node conformance/server.mjs [--port N]   (prints `listening <url>` on stdout)
// Needs built packages: pnpm turbo run build --filter=@capnode/mcp-server...
import { createInvoker, createRegistry, defineCapability, defineCommand, fail } from '@capnode/capabilities';
import { startHttpServer } from '@capnode/mcp-server/node';
import { z } from 'zod';
import { PNG_1X1, TEXTS, WAV_SILENCE, sleep } from './fixtureData.mjs';

const address = z.object({ street: z.string(), city: z.string() }).partial().meta({ id: 'address' });

export const conformanceFixture = defineCapability({
  category: 'conformance',
  commands: [
    defineCommand({
      name: 'test_simple_text',
      description: 'Returns one text block.',
      execute: () => TEXTS.simple,
    }),
    defineCommand({
      name: 'test_image_content',
      description: 'Returns a 1x1 PNG image block.',
      execute: () => ({ type: 'image', data: PNG_1X1, mimeType: 'image/png' }),
    }),
    defineCommand({
      name: 'test_audio_content',
      description: 'Returns a short WAV audio block.',
      execute: () => ({ type: 'audio', data: WAV_SILENCE, mimeType: 'audio/wav' }),
    }),
    defineCommand({
      name: 'test_embedded_resource',
      description: 'Returns an embedded text resource.',
      execute: () => ({
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: TEXTS.embedded },
      }),
    }),
    defineCommand({
      name: 'test_multiple_content_types',
      description: 'Returns text, image and resource blocks together.',
      execute: () => [
        { type: 'text', text: TEXTS.mixedHeading },
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: TEXTS.mixedJson } },
      ],
    }),
    defineCommand({
      name: 'test_tool_with_logging',
      description: 'Sends three info log messages 50 ms apart.',
      async execute(_args, { log }) {
        for (const [i, message] of TEXTS.logging.entries()) {
          if (i > 0) await sleep(50);
          log('info', message);
        }
        return 'Logging test completed';
      },
    }),
    defineCommand({
      name: 'test_error_handling',
      description: 'Always fails with a tool error.',
      execute: () => fail('failed', TEXTS.error),
    }),
    defineCommand({
      name: 'test_tool_with_progress',
      description: 'Reports progress 0, 50 and 100 of 100, 50 ms apart.',
      async execute(_args, { progress }) {
        for (const [i, value] of [0, 50, 100].entries()) {
          if (i > 0) await sleep(50);
          progress({ progress: value, total: 100 });
        }
        return 'Progress test completed';
      },
    }),
    defineCommand({
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      input: z.object({ name: z.string().optional(), address: address.optional() }).strict(),
      execute: () => 'ok',
    }),
  ],
});

async function main() {
  const portArg = process.argv.indexOf('--port');
  const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 0;
  const registry = createRegistry([conformanceFixture]);
  const invoker = createInvoker({
    registry,
    onInternalError: (error) => console.error('internal error:', error),
  });
  const server = await startHttpServer({ invoker, host: '127.0.0.1', port, token: { disabled: true } });
  console.log(`listening ${server.url}`);
  let closing = false;
  const stop = async () => {
    if (closing) return;
    closing = true;
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
