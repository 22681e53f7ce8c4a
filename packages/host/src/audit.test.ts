import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapabilityError, createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { argumentsHashSync } from '@capnode/protocol/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAuditLog } from './audit.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-audit-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const capability = defineCapability({
  category: 'test',
  commands: [
    defineCommand({ name: 'test.echo', description: 'echo', input: z.object({ secret: z.string() }), execute: (args) => args.secret }),
    defineCommand({
      name: 'test.refuse',
      description: 'refuse',
      execute: () => {
        throw new CapabilityError('denied', 'no');
      },
    }),
  ],
});

describe('audit log', () => {
  it('writes one line per invocation with the argument hash but never the values', async () => {
    const path = join(home, 'audit.log');
    const audit = createAuditLog({ path });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    await invoker.invoke({ command: 'TEST.ECHO', args: { secret: 'hunter2' }, transport: 'mcp-http', caller: 'tester', requestId: '7' });
    await invoker.invoke({ command: 'test.refuse', transport: 'mcp-stdio' });
    await invoker.invoke({ command: 'test.missing', args: { secret: 'x' }, transport: 'cli' });
    await audit.close();

    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain('hunter2');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      command: 'test.echo',
      transport: 'mcp-http',
      caller: 'tester',
      requestId: '7',
      argsSha256: argumentsHashSync({ secret: 'hunter2' }),
      outcome: 'ok',
    });
    expect(typeof lines[0].durationMs).toBe('number');
    expect(lines[1]).toMatchObject({ command: 'test.refuse', transport: 'mcp-stdio', outcome: 'denied' });
    expect(lines[2]).toMatchObject({ command: 'test.missing', outcome: 'unknown_command' });
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('moves a log over the size limit aside when opened', async () => {
    const path = join(home, 'audit.log');
    writeFileSync(path, 'x'.repeat(100));
    const audit = createAuditLog({ path, rotateBytes: 50 });
    await audit.close();
    expect(readFileSync(`${path}.1`, 'utf8')).toHaveLength(100);
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});
