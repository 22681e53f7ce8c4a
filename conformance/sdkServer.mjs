#!/usr/bin/env node
// Reference server: the same fixture tools on the MCP SDK v2's own McpServer + createMcpHandler over
// node:http, with the SDK's localhost Host/Origin validation. It proves the conformance runner and
// shows which scenarios the SDK alone passes; capnode's production stack is server.mjs.
//
// Usage: node conformance/sdkServer.mjs [--port N]   (prints `listening <url>` on stdout)
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import {
  McpServer,
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { PNG_1X1, TEXTS, WAV_SILENCE, sleep } from './fixtureData.mjs';

const address = z.object({ street: z.string(), city: z.string() }).partial().meta({ id: 'address' });
const jsonSchemaInput = z.object({ name: z.string().optional(), address: address.optional() }).strict();

function buildServer() {
  const server = new McpServer(
    { name: 'sdk-reference', version: '2.4.0' },
    { capabilities: { tools: {}, logging: {} } },
  );
  const noArgs = { description: 'conformance fixture', inputSchema: z.object({}) };
  server.registerTool('test_simple_text', noArgs, async () => ({ content: [{ type: 'text', text: TEXTS.simple }] }));
  server.registerTool('test_image_content', noArgs, async () => ({
    content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', noArgs, async () => ({
    content: [{ type: 'audio', data: WAV_SILENCE, mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', noArgs, async () => ({
    content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: TEXTS.embedded } }],
  }));
  server.registerTool('test_multiple_content_types', noArgs, async () => ({
    content: [
      { type: 'text', text: TEXTS.mixedHeading },
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: TEXTS.mixedJson } },
    ],
  }));
  server.registerTool('test_tool_with_logging', noArgs, async (_args, ctx) => {
    for (const [i, message] of TEXTS.logging.entries()) {
      if (i > 0) await sleep(50);
      await ctx.mcpReq.log('info', message);
    }
    return { content: [{ type: 'text', text: 'Logging test completed' }] };
  });
  server.registerTool('test_error_handling', noArgs, async () => ({ isError: true, content: [{ type: 'text', text: TEXTS.error }] }));
  server.registerTool('test_tool_with_progress', noArgs, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const [i, progress] of [0, 50, 100].entries()) {
      if (i > 0) await sleep(50);
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
      }
    }
    return { content: [{ type: 'text', text: 'Progress test completed' }] };
  });
  server.registerTool(
    'json_schema_2020_12_tool',
    { description: 'Tool with JSON Schema 2020-12 features', inputSchema: jsonSchemaInput },
    async () => ({ content: [{ type: 'text', text: 'ok' }] }),
  );
  return server;
}

const handler = createMcpHandler(() => buildServer());
const hosts = localhostAllowedHostnames();
const origins = localhostAllowedOrigins();

async function toWebRequest(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

const httpServer = createServer(async (req, res) => {
  try {
    const request = await toWebRequest(req);
    const response =
      hostHeaderValidationResponse(request, hosts) ??
      originValidationResponse(request, origins) ??
      (await handler.fetch(request));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body).pipe(res);
    else res.end();
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});

const portArg = process.argv.indexOf('--port');
const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 0;
httpServer.listen(port, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${httpServer.address().port}/`);
});
const stop = () => httpServer.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
