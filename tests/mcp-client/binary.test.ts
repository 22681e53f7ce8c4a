import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

const uploads = (workspace: string) => {
  try {
    return readdirSync(join(workspace, 'uploads'));
  } catch {
    return [];
  }
};

test('binary tool output is materialized under <workspace>/uploads and never reaches the model as base64', async () => {
  using workspace = tempDir();
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', workspace: workspace.path });

  const png = await runtime.call('fx__binary', { case: 'png' });
  expect(png.isError).toBe(false);
  expect(png.content[0]!.text).toBe('here');
  const path = png.content[1]!.text;
  expect(path.startsWith(join(workspace.path, 'uploads'))).toBe(true);
  expect(path.endsWith('.png')).toBe(true);
  expect(png.content[1]).toMatchObject({ annotations: { audience: ['user'] } });
  expect(png.attachments).toEqual([{ type: 'image', path, mimeType: 'image/png' }]);
  expect(readFileSync(path).subarray(0, 4).toString('latin1')).toBe('\x89PNG');

  const sniffed = await runtime.call('fx__binary', { case: 'png-no-mime' });
  expect(sniffed.attachments[0]!.mimeType).toBe('image/png');

  const pdf = await runtime.call('fx__binary', { case: 'pdf' });
  expect(textOf(pdf)).toMatch(/^\[Document: .*uploads\/[0-9a-f]+\.pdf \(application\/pdf, 13 bytes, from file:\/\/\/report\.pdf\)\]$/);
  expect((await runtime.call('fx__binary', { case: 'blob-image' })).attachments[0]!.mimeType).toBe('image/jpeg');
  expect(textOf(await runtime.call('fx__binary', { case: 'audio' }))).toBe('[audio attachment: audio/wav]');
  expect(textOf(await runtime.call('fx__binary', { case: 'mismatch' }))).toMatch(/^\[attachment unavailable: image bytes do not match image\/png/);
  expect(textOf(await runtime.call('fx__binary', { case: 'bmp' }))).toMatch(/^\[attachment unavailable: unsupported image type/);
  expect(textOf(await runtime.call('fx__binary', { case: 'malformed' }))).toBe('[attachment unavailable: malformed image data]\n[attachment unavailable: malformed image data]');
  expect(textOf(await runtime.call('fx__binary', { case: 'link' }))).toBe('[resource link: a.txt file:///a.txt]');
});

test('binary payloads past each bound are degraded and nothing is written', async () => {
  using workspace = tempDir();
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { tool_timeout_secs: 60 })]), { agent: 'test', workspace: workspace.path });

  const exactly64 = await runtime.call('fx__binary', { case: 'exactly-64' });
  expect(exactly64.attachments).toHaveLength(64);
  const written = uploads(workspace.path).length;
  expect(written).toBe(1);

  for (const [kind, pattern] of [
    ['too-many', /65 binary items in one result exceed the limit of 64/],
    ['too-big-total', /of binary data in one result exceeds the limit of 10 MiB/],
    ['file-too-big', /exceeds the 10 MB per-file limit/],
  ] as const) {
    const result = await runtime.call('fx__binary', { case: kind });
    expect(result.isError).toBe(false);
    expect(result.attachments).toEqual([]);
    for (const item of result.content) expect(item.text).toMatch(pattern);
    expect(JSON.stringify(result).length).toBeLessThan(20_000);
  }
  expect(uploads(workspace.path).length).toBe(written);
});

test('without a workspace binary items degrade to markers', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test' });
  expect(textOf(await runtime.call('fx__binary', { case: 'png' }))).toBe('here\n[attachment unavailable: no workspace is configured for attachments]');
});
