import { createInvoker, createRegistry, type InvocationHook } from '@capnode/capabilities';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { createMcpToolsSlot, type CallElicitor } from '@capnode/mcp-client';
import { expect, test } from 'vitest';
import { everythingServer } from '../support/mcpServers.js';
import { pipelineCarriesElicit } from '../support/pipelineProbe.js';
import { eventually } from '../support/poll.js';
import { fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';

const answerOf = (result: { content: readonly { text: string }[] }) => JSON.parse(textOf(result)) as { result?: Record<string, unknown>; error?: { code: number; message: string } };

const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 };
const elicitation = { message: 'Your name? token sk-live-0123456789abcdefSECRET', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };

test('without hooks no capability is declared and sampling, elicitation and roots requests get JSON-RPC -32601', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), { agent: 'test', logger: memoryLogger() });
  expect(JSON.parse(textOf(await runtime.call('fx__client-caps')))).toEqual({});
  for (const [method, params] of [
    ['sampling/createMessage', sampling],
    ['elicitation/create', elicitation],
    ['roots/list', undefined],
  ] as const) {
    const answer = answerOf(await runtime.call('fx__ask', { method, ...(params ? { params } : {}) }));
    expect(answer.error?.code, method).toBe(-32601);
  }
});

test('each hook declares its capability and answers; the handler learns which server asked', async () => {
  const asked: string[] = [];
  let roots = [{ uri: 'file:///work/a', name: 'a' }];
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    onSampling: (params, context) => {
      asked.push(`sampling from ${context.server}: ${JSON.stringify(params.messages[0]?.content)}`);
      expect(context.signal).toBeInstanceOf(AbortSignal);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled answer' } };
    },
    onElicitation: (params, context) => {
      asked.push(`elicitation from ${context.server}: ${params.message}`);
      return { action: 'accept', content: { name: 'Ada' } };
    },
    roots: () => roots,
  });
  const caps = JSON.parse(textOf(await runtime.call('fx__client-caps'))) as Record<string, unknown>;
  expect(caps).toEqual({ sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } });
  expect(answerOf(await runtime.call('fx__ask', { method: 'sampling/createMessage', params: sampling })).result).toMatchObject({ model: 'test-model', content: { text: 'sampled answer' } });
  expect(answerOf(await runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation })).result).toEqual({ action: 'accept', content: { name: 'Ada' } });
  expect(answerOf(await runtime.call('fx__ask', { method: 'roots/list' })).result).toEqual({ roots: [{ uri: 'file:///work/a', name: 'a' }] });
  roots = [{ uri: 'file:///work/b', name: 'b' }];
  await runtime.rootsChanged();
  expect(answerOf(await runtime.call('fx__ask', { method: 'roots/list' })).result).toEqual({ roots: [{ uri: 'file:///work/b', name: 'b' }] });
  expect(asked[0]).toBe('sampling from fx: {"type":"text","text":"hi"}');
  expect(asked[1]).toMatch(/^elicitation from fx: Your name\?/);
  // A result the SDK's schema rejects is an error for the server, not a crash.
  await using bad = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    onSampling: () => ({ nonsense: true }) as never,
  });
  expect(answerOf(await bad.call('fx__ask', { method: 'sampling/createMessage', params: sampling })).error?.code).toBeTypeOf('number');
});

test('server-everything: its sampling, elicitation and roots tools appear only with the hooks, and work through them', async () => {
  await using plain = await createMcpRuntime(grantAll([everythingServer()]), { agent: 'test', logger: memoryLogger() });
  const plainTools = Object.keys(await plain.tools());
  expect(plainTools).not.toContain('everything__trigger-sampling-request');
  expect(plainTools).not.toContain('everything__trigger-elicitation-request');
  expect(plainTools).not.toContain('everything__get-roots-list');

  await using runtime = await createMcpRuntime(grantAll([everythingServer()]), {
    agent: 'test',
    logger: memoryLogger(),
    onSampling: (params) => ({ model: 'harness-model', role: 'assistant', content: { type: 'text', text: `echo of ${JSON.stringify(params.messages.at(-1)?.content)}` } }),
    onElicitation: () => ({ action: 'decline' }),
    roots: [{ uri: 'file:///srv/project', name: 'project' }],
  });
  const tools = await runtime.tools();
  const sampled = textOf(await tools['everything__trigger-sampling-request']!.execute({ prompt: 'the prompt', maxTokens: 20 }));
  expect(sampled).toMatch(/harness-model/);
  expect(sampled).toMatch(/the prompt/);
  const elicited = await tools['everything__trigger-elicitation-request']!.execute({});
  expect(textOf(elicited)).toMatch(/decline/i);
  const rootsText = textOf(await tools['everything__get-roots-list']!.execute({}));
  expect(rootsText).toMatch(/file:\/\/\/srv\/project/);
});

/** A pipeline whose invocations carry `elicit`, as the host's does for clients that can elicit. */
function elicitingInvoker(elicit: CallElicitor | undefined, elicitOnRetry = false) {
  const hook: InvocationHook = {
    beforeInvoke(invocation) {
      if (elicit) Object.assign(invocation, { elicit, ...(elicitOnRetry ? { elicitOnRetry } : {}) });
    },
  };
  return createInvoker({ registry: createRegistry(), hooks: [hook, createMcpToolsSlot()] });
}

test("forwardElicitation: a server's question during a call goes to that call's client, scrubbed and naming the server", async () => {
  const asked: { message: string; requestedSchema: unknown }[] = [];
  const elicit: CallElicitor = async (request) => {
    asked.push(request);
    return { action: 'accept', content: { name: 'Grace' } };
  };
  const server = fixtureServer('fx', 'features', { env: { SECRET_TOKEN: 'sk-live-0123456789abcdefSECRET' } });
  await using runtime = await createMcpRuntime(grantAll([server]), { agent: 'test', logger: memoryLogger(), invoker: elicitingInvoker(elicit), forwardElicitation: true });
  expect(JSON.parse(textOf(await runtime.call('fx__client-caps')))).toEqual({ elicitation: { form: {} } });
  const answer = answerOf(await runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation }));
  expect(answer.result).toEqual({ action: 'accept', content: { name: 'Grace' } });
  expect(asked).toHaveLength(1);
  expect(asked[0]!.message).toBe("MCP server 'fx' asks: Your name? token [redacted]");
  expect(asked[0]!.requestedSchema).toEqual(elicitation.requestedSchema);
  // Sampling was not declared, so it is still refused.
  expect(answerOf(await runtime.call('fx__ask', { method: 'sampling/createMessage', params: sampling })).error?.code).toBe(-32601);
});

test('a forwarded question with no client to take it (and no onElicitation) is refused with -32603; URL mode is never forwarded', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), { agent: 'test', logger: memoryLogger(), invoker: elicitingInvoker(undefined), forwardElicitation: true });
  expect(answerOf(await runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation })).error?.code).toBe(-32603);
  // An elicit answered only on a retry of the call (2026-07-28 input_required) cannot take it either.
  let retried = 0;
  await using onRetry = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    invoker: elicitingInvoker(async () => ((retried += 1), { action: 'accept', content: {} }), true),
    forwardElicitation: true,
  });
  expect(answerOf(await onRetry.call('fx__ask', { method: 'elicitation/create', params: elicitation })).error?.code).toBe(-32603);
  expect(retried).toBe(0);

  let forwarded = 0;
  await using withFallback = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    invoker: elicitingInvoker(async () => ((forwarded += 1), { action: 'cancel' })),
    forwardElicitation: true,
    onElicitation: (params) => ({ action: 'accept', content: { via: `harness:${'mode' in params ? params.mode : 'form'}` } }),
  });
  const url = { mode: 'url', message: 'Open this', url: 'https://example.com/auth', elicitationId: 'e1' };
  expect(answerOf(await withFallback.call('fx__ask', { method: 'elicitation/create', params: url })).result).toMatchObject({ action: 'accept', content: { via: 'harness:url' } });
  expect(forwarded).toBe(0);
  expect(answerOf(await withFallback.call('fx__ask', { method: 'elicitation/create', params: elicitation })).result).toEqual({ action: 'cancel' });
  expect(forwarded).toBe(1);
});

test('with two calls in flight on the server, which one asked cannot be told, so neither client is asked', async () => {
  let asked = 0;
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    invoker: elicitingInvoker(async () => ((asked += 1), { action: 'accept', content: { name: 'x' } })),
    forwardElicitation: true,
  });
  const slow = runtime.call('fx__slow', { ms: 800 });
  const answer = answerOf(await runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation }));
  expect(answer.error?.code).toBe(-32603);
  expect(asked).toBe(0);
  expect(textOf(await slow)).toBe('slow done');
  // Alone again, the call's client is asked.
  expect(answerOf(await runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation })).result).toEqual({ action: 'accept', content: { name: 'x' } });
  expect(asked).toBe(1);
});

test('a call still waiting for a max_concurrent_calls slot is not in flight: the call holding the slot gets the question', async () => {
  let asked = 0;
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features', { max_concurrent_calls: 1 })]), {
    agent: 'test',
    logger: memoryLogger(),
    invoker: elicitingInvoker(async () => ((asked += 1), { action: 'accept', content: { name: 'y' } })),
    forwardElicitation: true,
  });
  const ask = runtime.call('fx__ask', { method: 'elicitation/create', params: elicitation });
  const queued = runtime.call('fx__echo', { text: 'after' });
  expect(answerOf(await ask).result).toEqual({ action: 'accept', content: { name: 'y' } });
  expect(asked).toBe(1);
  expect(textOf(await queued)).toBe('after');
});

test("a hook's signal aborts when the runtime closes, and close() does not wait for the hook", async () => {
  let signal: AbortSignal | undefined;
  const runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features')]), {
    agent: 'test',
    logger: memoryLogger(),
    onSampling: (_params, context) => {
      signal = context.signal;
      return new Promise<never>(() => {});
    },
  });
  const call = runtime.call('fx__ask', { method: 'sampling/createMessage', params: sampling });
  await eventually(() => signal, { what: 'the sampling request' });
  expect(signal!.aborted).toBe(false);
  await runtime.close();
  expect(signal!.aborted).toBe(true);
  expect((await call).isError).toBe(true);
});

test.runIf(await pipelineCarriesElicit())("end to end: InvokeOptions.elicit of the host's caller answers the imported server's question", async () => {
  const invoker = createInvoker({ registry: createRegistry(), hooks: [createMcpToolsSlot()] });
  const server = fixtureServer('fx', 'features', { env: { SECRET_TOKEN: 'sk-live-0123456789abcdefSECRET' } });
  await using runtime = await createMcpRuntime(grantAll([server]), { agent: 'test', logger: memoryLogger(), invoker, forwardElicitation: true });
  expect(runtime.diagnostics()[0]!.state).toBe('connected');
  const asked: string[] = [];
  const elicit: CallElicitor = async (request) => (asked.push(request.message), { action: 'accept', content: { name: 'Lin' } });
  const outcome = await invoker.invoke(
    { command: 'fx__ask', args: { method: 'elicitation/create', params: elicitation }, transport: 'mcp-stdio' },
    { elicit } as Parameters<typeof invoker.invoke>[1],
  );
  expect(outcome.result.ok).toBe(true);
  const text = outcome.result.ok ? (outcome.result.content[0] as { text: string }).text : '';
  expect(JSON.parse(text)).toEqual({ result: { action: 'accept', content: { name: 'Lin' } } });
  expect(asked).toEqual(["MCP server 'fx' asks: Your name? token [redacted]"]);
});
