// A bounded JSON-RPC fuzz run against real servers: 10,000 malformed bodies (random bytes, truncated
// JSON, wrong types for every field, huge numbers, deep nesting, prototype keys, batches, invalid
// UTF-8) over HTTP and stdio, from a fixed seed. No crash, no hang, every answer valid JSON (or the
// empty 202 of a notification-only POST), no internal message.
import { Agent, request } from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFuzzer, type FuzzCase } from './fuzz/generate.js';
import { TOKEN, postJson, spawnRawStdio, useSuiteFixtureServer } from './helpers.js';
import { eventually } from '../support/poll.js';

const SEED = 0x8c1a7e;
const HTTP_CASES = 6_000;
const STDIO_CASES = 4_000;
const CONCURRENCY = 8;
/** What an answer must never contain: engine error text, stack frames, the fixture's secret. */
const INTERNAL = /Maximum call stack|Cannot read propert|Cannot convert|is not a function|is not iterable|is not defined|undefined is not|of undefined|\bat (?:async )?\S+ \(|node:internal|TypeError|RangeError|ReferenceError|SECRET/;

function describeCase(index: number, fuzz: FuzzCase): string {
  const text = fuzz.body.toString('utf8');
  return `case ${index} (${fuzz.kind}, seed ${SEED}) headers ${JSON.stringify(fuzz.headers)} body ${JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}…(${text.length})` : text)}`;
}

/** A JSON-RPC response object: jsonrpc 2.0 and exactly one of result / error (a well-formed error). */
function checkResponse(message: unknown, where: string): void {
  expect(typeof message === 'object' && message !== null && !Array.isArray(message), `${where}: not an object`).toBe(true);
  const response = message as Record<string, unknown>;
  expect(response.jsonrpc, where).toBe('2.0');
  if ('method' in response) return; // a notification in an SSE stream (progress, log)
  expect('result' in response !== 'error' in response, `${where}: result xor error`).toBe(true);
  if ('error' in response) {
    const error = response.error as { code?: unknown; message?: unknown };
    expect(Number.isInteger(error.code), `${where}: error.code`).toBe(true);
    expect(typeof error.message, `${where}: error.message`).toBe('string');
  }
}

function checkBody(text: string, where: string): void {
  expect(text, where).not.toMatch(INTERNAL);
  let parsed: unknown;
  expect(() => (parsed = JSON.parse(text)), `${where}: answer is not JSON: ${text.slice(0, 200)}`).not.toThrow();
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) checkResponse(message, where);
}

function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter(Boolean);
}

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

function post(agent: Agent, port: number, fuzz: FuzzCase): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent,
        timeout: 10_000,
        headers: {
          host: `127.0.0.1:${port}`,
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(fuzz.body.length),
          ...fuzz.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s (hang)')));
    req.on('error', reject);
    req.end(fuzz.body);
  });
}

describe('JSON-RPC fuzz over HTTP', () => {
  const ctx = useSuiteFixtureServer({ maxConcurrency: 64 });

  it(`answers ${HTTP_CASES} malformed bodies with valid JSON and no internal message`, { timeout: 120_000 }, async () => {
    const next = createFuzzer(SEED);
    const cases = Array.from({ length: HTTP_CASES }, next);
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const statuses = new Map<number, number>();
    let cursor = 0;
    const worker = async (): Promise<void> => {
      while (cursor < cases.length) {
        const index = cursor++;
        const fuzz = cases[index]!;
        const where = describeCase(index, fuzz);
        let answer: Answer;
        try {
          answer = await post(agent, ctx.server.port, fuzz);
        } catch (error) {
          throw new Error(`${where}: ${(error as Error).message}`);
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect([200, 202, 400, 404, 405, 406, 413, 415], `${where}: status ${answer.status} ${answer.body.slice(0, 200)}`).toContain(answer.status);
        if (answer.status === 202) {
          expect(answer.body, where).toBe('');
        } else if (answer.contentType.startsWith('text/event-stream')) {
          expect(answer.body, where).not.toMatch(INTERNAL);
          for (const data of sseData(answer.body)) checkBody(data, where);
        } else {
          expect(answer.contentType, `${where}: content-type`).toContain('application/json');
          checkBody(answer.body, where);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      agent.destroy();
    }
    console.info(`HTTP fuzz: ${HTTP_CASES} cases, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

    // Nothing leaked into Object.prototype of the serving process, nothing is left running, and the
    // server still serves.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('text');
    await eventually(() => ctx.server.inFlight === 0, { what: 'every fuzz request to finish' });
    expect(JSON.parse((await postJson(ctx.server.url, { jsonrpc: '2.0', id: 'alive', method: 'ping' })).body)).toEqual({ jsonrpc: '2.0', id: 'alive', result: {} });
  });
});

describe('JSON-RPC fuzz over stdio', () => {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(new URL('../../packages/mcp-server/dist/stdio.js', import.meta.url)))) {
      throw new Error('The stdio fixture imports built packages: run `pnpm --filter @capnode/mcp-server... build` first.');
    }
  });

  it(`survives ${STDIO_CASES} malformed lines: stdout stays valid JSON-RPC, no internal message`, { timeout: 120_000 }, async () => {
    const next = createFuzzer(SEED ^ 0x5151);
    await using stdio = spawnRawStdio();
    let exited = false;
    void stdio.exited.then(() => (exited = true));
    const init = await stdio.request({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });
    expect(init.result.protocolVersion).toBe('2025-06-18');
    stdio.write('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    for (let index = 0; index < STDIO_CASES; index += 1) {
      const fuzz = next();
      // One line per case: a newline inside the body would only split it into more cases.
      const line = Buffer.from(fuzz.body.map((byte) => (byte === 0x0a || byte === 0x0d ? 0x20 : byte)));
      stdio.write(line);
      if (index % 250 === 249) {
        // A sentinel after every 250 lines: the server still reads and answers (no hang, no crash).
        const sentinel = await stdio.request({ jsonrpc: '2.0', id: `sentinel-${index}`, method: 'tools/list' }, 20_000).catch((error: Error) => {
          throw new Error(`after ${describeCase(index, fuzz)}: ${error.message}`);
        });
        expect(sentinel, `after case ${index}`).toHaveProperty('id', `sentinel-${index}`);
        expect(exited, `the server exited after case ${index}`).toBe(false);
      }
    }
    const last = await stdio.request({ jsonrpc: '2.0', id: 'last', method: 'ping' }, 20_000);
    expect(last.result).toEqual({});
    for (const [index, line] of stdio.lines.entries()) {
      if (line === '') continue;
      checkBody(line, `stdout line ${index}`);
    }
    console.info(`stdio fuzz: ${STDIO_CASES} cases, ${stdio.lines.length} stdout lines`);
  });
});
