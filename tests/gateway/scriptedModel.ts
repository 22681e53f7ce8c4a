import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const SCRIPTED_MODEL_ID = 'scripted-1';
export const SCRIPTED_PROVIDER_ID = 'capnode-scripted';
export const SCRIPTED_FINAL_TEXT = 'capnode scripted model: done';

/** One chat request the scripted model received, as OpenClaw's `openai-completions` adapter sent it. */
export interface ScriptedChatRequest {
  readonly body: {
    messages?: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
    tools?: Array<{ function?: { name?: string; description?: string; parameters?: unknown } }>;
    stream?: boolean;
  };
}

/** A tool call the script makes: `undefined` answers with {@link SCRIPTED_FINAL_TEXT}. */
export type ScriptStep = (request: ScriptedChatRequest) => { readonly id: string; readonly name: string; readonly arguments: Record<string, unknown> } | undefined;

/**
 * An OpenAI-compatible chat-completions endpoint on 127.0.0.1 playing a script (as in
 * agentExec.interop.ts): a request without a tool result gets the tool call `next` returns (if any);
 * every other request gets {@link SCRIPTED_FINAL_TEXT}. Streams when asked to.
 */
export interface ScriptedModel {
  readonly baseUrl: string;
  readonly requests: ScriptedChatRequest[];
  setScript(next: ScriptStep): void;
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion.chunk', created: 0, model: SCRIPTED_MODEL_ID, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

function reply(response: ServerResponse, stream: boolean, message: { content?: string; toolCall?: { id: string; name: string; arguments: string } }): void {
  const toolCalls = message.toolCall ? [{ index: 0, id: message.toolCall.id, type: 'function', function: { name: message.toolCall.name, arguments: message.toolCall.arguments } }] : undefined;
  const finish = toolCalls ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion', created: 0, model: SCRIPTED_MODEL_ID, choices: [{ index: 0, message: { role: 'assistant', content: message.content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finish }], usage }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(chunk({ role: 'assistant', ...(message.content ? { content: message.content } : {}), ...(toolCalls ? { tool_calls: toolCalls } : {}) }, null));
  response.write(`data: ${JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion.chunk', created: 0, model: SCRIPTED_MODEL_ID, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
  response.end('data: [DONE]\n\n');
}

export async function startScriptedModel(): Promise<ScriptedModel> {
  const requests: ScriptedChatRequest[] = [];
  let script: ScriptStep = () => undefined;
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    let raw = '';
    for await (const part of request) raw += String(part);
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw || '{}') as ScriptedChatRequest['body'];
    requests.push({ body });
    const stream = body.stream === true;
    const hasToolResult = (body.messages ?? []).some((message) => message.role === 'tool');
    const call = hasToolResult ? undefined : script({ body });
    if (call) {
      reply(response, stream, { toolCall: { id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) } });
      return;
    }
    reply(response, stream, { content: SCRIPTED_FINAL_TEXT });
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setScript: (next) => void (script = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The gateway config that makes the scripted model the default agent's model (and exec go to a gateway node). */
export function scriptedAgentConfig(baseUrl: string): Record<string, unknown> {
  return {
    models: {
      mode: 'merge',
      providers: {
        [SCRIPTED_PROVIDER_ID]: {
          baseUrl,
          apiKey: 'capnode-scripted-key',
          api: 'openai-completions',
          models: [{ id: SCRIPTED_MODEL_ID, name: 'capnode scripted model', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128_000, maxTokens: 4_096 }],
        },
      },
    },
    agents: { defaults: { model: { primary: `${SCRIPTED_PROVIDER_ID}/${SCRIPTED_MODEL_ID}` } } },
    tools: { exec: { host: 'node' } },
  };
}
