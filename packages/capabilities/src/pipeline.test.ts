import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { fail, json, text } from './content.js';
import { defineCapability, defineCommand, type CommandContext, type InvocationRequest, type LogLevel, type ProgressUpdate } from './contract.js';
import { CapabilityError } from './errors.js';
import { createInvoker, type Invocation, type InvocationOutcome } from './pipeline.js';
import { createRegistry } from './registry.js';

const request = (command: string, args?: unknown, extra: Partial<InvocationRequest> = {}): InvocationRequest => ({ command, args, transport: 'internal', ...extra });

/** Resolves when `signal` aborts; never otherwise. */
const untilAborted = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

function setup() {
  const seen: { args: unknown; ctx: CommandContext }[] = [];
  const registry = createRegistry([
    defineCapability({
      category: 'demo',
      commands: [
        defineCommand({
          name: 'demo.Add',
          description: 'Adds.',
          input: z.object({ a: z.number(), b: z.number().default(0) }),
          execute: ({ a, b }, ctx) => {
            seen.push({ args: { a, b }, ctx });
            return json({ sum: a + b });
          },
        }),
        defineCommand({
          name: 'demo.any',
          description: 'No schema.',
          execute: (args, ctx) => {
            seen.push({ args, ctx });
            return 'ok';
          },
        }),
      ],
    }),
  ]);
  return { registry, seen };
}

describe('createInvoker', () => {
  it('runs a command with parsed arguments and reports the canonical name', async () => {
    const { registry, seen } = setup();
    const invoker = createInvoker({ registry });
    const outcome = await invoker.invoke(request('DEMO.ADD', { a: 2 }));
    expect(outcome.command).toBe('demo.Add');
    expect(outcome.result).toEqual(json({ sum: 2 }));
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen[0]?.args).toEqual({ a: 2, b: 0 });
    expect(invoker.registry).toBe(registry);
  });

  it('fails unknown commands as unknown_command without a command name', async () => {
    const invoker = createInvoker({ registry: createRegistry() });
    const outcome = await invoker.invoke(request('nope.missing'));
    expect(outcome.command).toBeUndefined();
    expect(outcome.result).toEqual(fail('unknown_command', 'Unknown tool: nope.missing'));
  });

  it('fails invalid arguments with a message naming the field', async () => {
    const { registry, seen } = setup();
    const outcome = await createInvoker({ registry }).invoke(request('demo.add', { a: 'two' }));
    expect(outcome.result.ok).toBe(false);
    if (outcome.result.ok) return;
    expect(outcome.result.error.code).toBe('invalid_arguments');
    expect(outcome.result.error.message).toMatch(/^Invalid arguments for demo\.Add: a: /);
    expect(outcome.result.error.message).toMatch(/number/);
    expect(seen).toHaveLength(0);
  });

  it('accepts null and undefined arguments as {}', async () => {
    const { registry, seen } = setup();
    const invoker = createInvoker({ registry });
    expect((await invoker.invoke(request('demo.any', null))).result).toEqual(text('ok'));
    expect((await invoker.invoke(request('demo.any', undefined))).result).toEqual(text('ok'));
    expect(seen.map((s) => s.args)).toEqual([{}, {}]);
  });

  it.each([[[1, 2]], ['text'], [42], [true]])('rejects non-object arguments %j', async (args) => {
    const { registry, seen } = setup();
    const outcome = await createInvoker({ registry }).invoke(request('demo.any', args));
    expect(outcome.result).toEqual(fail('invalid_arguments', 'Arguments must be a JSON object.'));
    expect(outcome.command).toBe('demo.any');
    expect(seen).toHaveLength(0);
  });

  it('runs beforeInvoke hooks in order after validation, then afterInvoke hooks with the outcome', async () => {
    const { registry } = setup();
    const order: string[] = [];
    const after: [Invocation | undefined, InvocationOutcome][] = [];
    const invoker = createInvoker({
      registry,
      hooks: [
        { beforeInvoke: (inv) => void order.push(`first:${JSON.stringify(inv.args)}`), afterInvoke: (inv, _req, outcome) => void after.push([inv, outcome]) },
        {
          beforeInvoke: async () => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            order.push('second');
          },
        },
      ],
    });
    await invoker.invoke(request('demo.add', { a: 1, b: 2 }));
    expect(order).toEqual(['first:{"a":1,"b":2}', 'second']);
    order.length = 0;
    await invoker.invoke(request('demo.add', { a: 1 }));
    expect(order).toEqual(['first:{"a":1,"b":0}', 'second']);
    expect(after).toHaveLength(2);
    expect(after[0]?.[0]?.command.name).toBe('demo.Add');
    expect(after[0]?.[1].result).toEqual(json({ sum: 3 }));
  });

  it('keeps the hook slots fixed as composed: named, frozen, no way to add one later', async () => {
    const { registry } = setup();
    const order: string[] = [];
    const slot = (name: string, wait = false) => ({
      name,
      beforeInvoke: wait ? async () => void order.push(`${name}:before`) : () => void order.push(`${name}:before`),
      afterInvoke: () => void order.push(`${name}:after`),
    });
    const hooks = [slot('gate'), slot('approval', true), slot('audit')];
    const invoker = createInvoker({ registry, hooks });
    hooks.push(slot('late'));
    expect(invoker.hooks.map((hook) => hook.name)).toEqual(['gate', 'approval', 'audit']);
    expect(Object.isFrozen(invoker.hooks)).toBe(true);
    expect('use' in invoker).toBe(false);
    await invoker.invoke(request('demo.add', { a: 1, b: 2 }));
    expect(order).toEqual(['gate:before', 'approval:before', 'audit:before', 'gate:after', 'approval:after', 'audit:after']);
  });

  it('does not run hooks for invalid arguments but still reports the outcome to afterInvoke', async () => {
    const { registry } = setup();
    const before = vi.fn();
    const after = vi.fn();
    await createInvoker({ registry, hooks: [{ beforeInvoke: before, afterInvoke: after }] }).invoke(request('demo.add', {}));
    expect(before).not.toHaveBeenCalled();
    expect(after).toHaveBeenCalledOnce();
    expect(after.mock.calls[0]?.[0]).toBeUndefined();
    expect(after.mock.calls[0]?.[2].result.error.code).toBe('invalid_arguments');
  });

  it('refuses the call when a hook denies, without running later hooks or the command', async () => {
    const { registry, seen } = setup();
    const later = vi.fn();
    const invoker = createInvoker({
      registry,
      hooks: [
        {
          beforeInvoke: () => {
            throw new CapabilityError('denied', 'Policy says no.', { data: { rule: 'x' } });
          },
        },
        { beforeInvoke: later },
      ],
    });
    const outcome = await invoker.invoke(request('demo.add', { a: 1 }));
    expect(outcome.result).toEqual(fail('denied', 'Policy says no.', { rule: 'x' }));
    expect(later).not.toHaveBeenCalled();
    expect(seen).toHaveLength(0);
  });

  it('turns the deadline into a timeout failure even when the command ignores its signal', async () => {
    const registry = createRegistry([
      defineCapability({ category: 'slow', commands: [defineCommand({ name: 'slow.stuck', description: '', execute: () => new Promise(() => {}) })] }),
    ]);
    const outcome = await createInvoker({ registry }).invoke(request('slow.stuck', {}, { timeoutMs: 50 }));
    expect(outcome.result).toEqual(fail('timeout', 'slow.stuck timed out after 50 ms.'));
  });

  it('applies the default deadline, and a deadline while a hook waits', async () => {
    const registry = createRegistry([defineCapability({ category: 'x', commands: [defineCommand({ name: 'x.run', description: '', execute: () => 'ran' })] })]);
    const hookSignals: AbortSignal[] = [];
    const invoker = createInvoker({
      registry,
      defaultTimeoutMs: 50,
      hooks: [
        {
          beforeInvoke: (inv) => {
            hookSignals.push(inv.signal);
            return untilAborted(inv.signal);
          },
        },
      ],
    });
    const outcome = await invoker.invoke(request('x.run'));
    expect(outcome.result).toEqual(fail('timeout', 'x.run timed out after 50 ms.'));
    expect(hookSignals[0]?.aborted).toBe(true);
  });

  it('does not fire at once for deadlines beyond the timer range', async () => {
    const { registry } = setup();
    const outcome = await createInvoker({ registry }).invoke(request('demo.any', {}, { timeoutMs: 1e12 }));
    expect(outcome.result).toEqual(text('ok'));
  });

  it('reports a caller abort as cancelled, even when the command ignores the signal', async () => {
    const registry = createRegistry([
      defineCapability({ category: 'slow', commands: [defineCommand({ name: 'slow.stuck', description: '', execute: () => new Promise(() => {}) })] }),
    ]);
    const controller = new AbortController();
    const pending = createInvoker({ registry }).invoke(request('slow.stuck'), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await pending).result).toEqual(fail('cancelled', 'slow.stuck was cancelled.'));
  });

  it('reports cancelled even when the command returns its own result after the abort', async () => {
    let ctxSignal: AbortSignal | undefined;
    const registry = createRegistry([
      defineCapability({
        category: 'c',
        commands: [
          defineCommand({
            name: 'c.own',
            description: '',
            execute: async (_args, ctx) => {
              ctxSignal = ctx.signal;
              await untilAborted(ctx.signal);
              return text('finished anyway');
            },
          }),
          defineCommand({
            name: 'c.fail',
            description: '',
            execute: async (_args, ctx) => {
              await untilAborted(ctx.signal);
              return fail('failed', 'my own failure');
            },
          }),
        ],
      }),
    ]);
    const invoker = createInvoker({ registry });
    for (const name of ['c.own', 'c.fail']) {
      const controller = new AbortController();
      const pending = invoker.invoke(request(name), { signal: controller.signal });
      setTimeout(() => controller.abort(), 10);
      expect((await pending).result).toEqual(fail('cancelled', `${name} was cancelled.`));
    }
    expect(ctxSignal?.aborted).toBe(true);
  });

  it('reports an already aborted caller signal as cancelled without running the command', async () => {
    const { registry, seen } = setup();
    const outcome = await createInvoker({ registry }).invoke(request('demo.any'), { signal: AbortSignal.abort() });
    expect(outcome.result).toEqual(fail('cancelled', 'demo.any was cancelled.'));
    expect(seen).toHaveLength(0);
  });

  it('hides internal exceptions behind a generic message and reports them to onInternalError', async () => {
    const onInternalError = vi.fn();
    const registry = createRegistry([
      defineCapability({
        category: 'bug',
        commands: [
          defineCommand({
            name: 'bug.throw',
            description: '',
            execute: () => {
              throw new Error('secret path /home/me/.token');
            },
          }),
        ],
      }),
    ]);
    const outcome = await createInvoker({ registry, onInternalError }).invoke(request('bug.throw'));
    expect(outcome.result).toEqual(fail('internal', 'bug.throw failed with an internal error.'));
    expect(JSON.stringify(outcome)).not.toContain('secret');
    expect(onInternalError).toHaveBeenCalledOnce();
    expect((onInternalError.mock.calls[0]?.[0] as Error).message).toBe('secret path /home/me/.token');
    expect(onInternalError.mock.calls[0]?.[1]).toMatchObject({ command: 'bug.throw' });
  });

  it('takes a thenable output as a promise, and goes on after a hook that waits', async () => {
    const order: string[] = [];
    const registry = createRegistry([
      defineCapability({
        category: 'then',
        commands: [
          defineCommand({
            name: 'then.able',
            description: '',
            execute: () => {
              order.push('execute');
              return { then: (resolve: (value: string) => void) => resolve('from a thenable') } as unknown as Promise<string>;
            },
          }),
        ],
      }),
    ]);
    const hooks = [
      { name: 'waits', beforeInvoke: async () => void order.push('waits') },
      { name: 'at once', beforeInvoke: () => void order.push('at once') },
    ];
    const outcome = await createInvoker({ registry, hooks }).invoke(request('then.able'));
    expect(outcome.result).toEqual(text('from a thenable'));
    expect(order).toEqual(['waits', 'at once', 'execute']);
  });

  it('finishes a failed call even when onInternalError throws', async () => {
    const registry = createRegistry([
      defineCapability({
        category: 'bug',
        commands: [defineCommand({ name: 'bug.sync', description: '', execute: () => { throw new Error('inner'); } })],
      }),
    ]);
    const onInternalError = vi.fn(() => {
      throw new Error('reporter');
    });
    const outcome = await createInvoker({ registry, onInternalError }).invoke(request('bug.sync'));
    expect(outcome.result).toEqual(fail('internal', 'bug.sync failed with an internal error.'));
    expect(onInternalError).toHaveBeenCalledOnce();
  });

  it('hides a hook exception too, and reports afterInvoke exceptions without changing the outcome', async () => {
    const { registry } = setup();
    const onInternalError = vi.fn();
    const invoker = createInvoker({
      registry,
      onInternalError,
      hooks: [
        {
          beforeInvoke: () => {
            throw new TypeError('hook internals');
          },
          afterInvoke: () => {
            throw new Error('audit down');
          },
        },
      ],
    });
    const outcome = await invoker.invoke(request('demo.any'));
    expect(outcome.result).toEqual(fail('internal', 'demo.any failed with an internal error.'));
    expect(onInternalError).toHaveBeenCalledTimes(2);
  });

  it('passes CapabilityError failures through with code, message and data', async () => {
    const registry = createRegistry([
      defineCapability({
        category: 'e',
        commands: [
          defineCommand({
            name: 'e.unsupported',
            description: '',
            execute: () => {
              throw new CapabilityError('unsupported', 'Not here.', { data: { hint: 'install x' } });
            },
          }),
        ],
      }),
    ]);
    const outcome = await createInvoker({ registry }).invoke(request('e.unsupported'));
    expect(outcome.result).toEqual(fail('unsupported', 'Not here.', { hint: 'install x' }));
  });

  it('forwards progress and log lines, and drops them after the outcome', async () => {
    let late: CommandContext | undefined;
    const registry = createRegistry([
      defineCapability({
        category: 'p',
        commands: [
          defineCommand({
            name: 'p.work',
            description: '',
            execute: (_args, ctx) => {
              ctx.progress({ progress: 1, total: 2, message: 'half' });
              ctx.log('info', 'working');
              ctx.progress({ progress: 2, total: 2 });
              late = ctx;
              return 'done';
            },
          }),
        ],
      }),
    ]);
    const progress: ProgressUpdate[] = [];
    const logs: [LogLevel, string][] = [];
    const outcome = await createInvoker({ registry }).invoke(request('p.work'), {
      onProgress: (update) => progress.push(update),
      onLog: (level, message) => logs.push([level, message]),
    });
    expect(outcome.result).toEqual(text('done'));
    expect(progress).toEqual([{ progress: 1, total: 2, message: 'half' }, { progress: 2, total: 2 }]);
    expect(logs).toEqual([['info', 'working']]);
    late?.progress({ progress: 3 });
    late?.log('info', 'too late');
    expect(progress).toHaveLength(2);
    expect(logs).toHaveLength(1);
  });

  it('gives commands a no-op progress and log when the caller wants none, and the request as received', async () => {
    const { registry, seen } = setup();
    const req = request('demo.any', {}, { requestId: '7', caller: 'tester', transport: 'mcp-http' });
    await createInvoker({ registry }).invoke(req);
    const ctx = seen[0]!.ctx;
    expect(() => ctx.progress({ progress: 1 })).not.toThrow();
    expect(() => ctx.log('debug', 'x')).not.toThrow();
    expect(ctx.request).toBe(req);
    expect(ctx.signal.aborted).toBe(false);
  });

  it('normalizes string, content and content-array outputs', async () => {
    const registry = createRegistry([
      defineCapability({
        category: 'n',
        commands: [
          defineCommand({ name: 'n.content', description: '', execute: () => ({ type: 'image', data: 'AA==', mimeType: 'image/png' }) }),
          defineCommand({ name: 'n.list', description: '', execute: () => [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }),
        ],
      }),
    ]);
    const invoker = createInvoker({ registry });
    expect((await invoker.invoke(request('n.content'))).result).toEqual({ ok: true, content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] });
    expect((await invoker.invoke(request('n.list'))).result).toEqual({ ok: true, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] });
  });
});
