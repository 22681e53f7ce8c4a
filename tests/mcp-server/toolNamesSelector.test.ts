// Attacks on the tool name selector (`?toolNames=` / `Capnode-Tool-Names`): each odd input has one
// pinned answer — first query value wins, exact lower-case only, empty is a 400, percent-encoding is
// decoded, and the query wins over the header (even over a header that alone would be a 400).
import { describe, expect, it } from 'vitest';
import { postJson, useSuiteFixtureServer } from './helpers.js';

const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

function names(body: string): string[] {
  return (JSON.parse(body) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
}

describe('tool name selector inputs', () => {
  const ctx = useSuiteFixtureServer();

  it('a repeated query parameter: the first value is the one used', async () => {
    const first = await postJson(ctx.url, list, {}, '/?toolNames=underscore&toolNames=snake');
    expect(first.status).toBe(200);
    expect(names(first.body)).toContain('fixture_echo');
    const bad = await postJson(ctx.url, list, {}, '/?toolNames=snake&toolNames=underscore');
    expect(bad.status).toBe(400);
  });

  it('mixed case and empty values are 400s, by query and by header', async () => {
    for (const path of ['/?toolNames=Underscore', '/?toolNames=DOTTED', '/?toolNames=', '/?toolNames']) {
      const reply = await postJson(ctx.url, list, {}, path);
      expect(reply.status, path).toBe(400);
      expect(reply.body).toContain("must be 'dotted' or 'underscore'");
    }
    for (const value of ['Underscore', 'underscore, dotted']) {
      const reply = await postJson(ctx.url, list, { 'capnode-tool-names': value });
      expect(reply.status, value).toBe(400);
      expect(reply.body).toContain('Capnode-Tool-Names header');
    }
  });

  it('an empty or blank header is a 400 too (it is present, and names no style)', async () => {
    for (const value of ['', '   ']) {
      const reply = await postJson(ctx.url, list, { 'capnode-tool-names': value });
      expect(reply.status, JSON.stringify(value)).toBe(400);
      expect(reply.body).toContain('Capnode-Tool-Names header');
    }
  });

  it('percent-encoded values are decoded; the header is trimmed', async () => {
    const encoded = await postJson(ctx.url, list, {}, '/?toolNames=%75nderscore');
    expect(encoded.status).toBe(200);
    expect(names(encoded.body)).toContain('fixture_echo');
    const padded = await postJson(ctx.url, list, { 'capnode-tool-names': '  underscore ' });
    expect(names(padded.body)).toContain('fixture_echo');
  });

  it('query and header disagreeing: the query wins, even over an invalid header', async () => {
    const dotted = await postJson(ctx.url, list, { 'capnode-tool-names': 'underscore' }, '/?toolNames=dotted');
    expect(names(dotted.body)).toContain('fixture.echo');
    const overBad = await postJson(ctx.url, list, { 'capnode-tool-names': 'camel' }, '/?toolNames=underscore');
    expect(overBad.status).toBe(200);
    expect(names(overBad.body)).toContain('fixture_echo');
    const badQuery = await postJson(ctx.url, list, { 'capnode-tool-names': 'underscore' }, '/?toolNames=camel');
    expect(badQuery.status).toBe(400);
  });
});
