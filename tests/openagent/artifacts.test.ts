import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pseudoRandom, startOpenAgentHost } from '../support/openAgentHost.js';
import { eventually } from '../support/poll.js';

type Frame = Record<string, unknown>;

function reassemble(chunks: readonly Frame[]): Buffer {
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.data as string, 'base64')));
}

describe('OpenAgent channel: artifacts', () => {
  it('streams a ≥ 600 KiB image as 512 KiB chunks before the result, reassembled to its digest', async () => {
    await using oa = await startOpenAgentHost();
    const bytes = 600 * 1024;
    const call = await oa.bridge.call('oa.blob', { bytes });
    const result = await oa.bridge.result(call.call_id as string);
    const expected = pseudoRandom(bytes);
    const digest = createHash('sha256').update(expected).digest('hex');
    const chunks = oa.bridge.framesOf('client_artifact_chunk').filter((chunk) => chunk.call_id === call.call_id);
    expect(chunks.map((chunk) => [chunk.seq, chunk.eof])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect(chunks[0]).toMatchObject({ generation: 1, size: bytes, mime_type: 'image/png', sha256: digest, transfer_id: `${call.call_id}-0-${digest.slice(0, 12)}` });
    expect(chunks[1]!.size).toBeUndefined();
    expect(Buffer.from(chunks[0]!.data as string, 'base64')).toHaveLength(512 * 1024);
    expect(reassemble(chunks).equals(expected)).toBe(true);
    const order = oa.bridge.frames.map((entry) => entry.frame);
    expect(order.indexOf(chunks[1]!)).toBeLessThan(order.indexOf(result));
    expect((result.result as { content: Frame[] }).content).toEqual([
      { type: 'text', text: 'here' },
      { type: 'artifact_ref', transfer_id: chunks[0]!.transfer_id, artifact_template: { type: 'image', mimeType: 'image/png' }, artifact_insert_path: ['data'] },
    ]);
  });

  it('keeps content under 256 KiB inline', async () => {
    await using oa = await startOpenAgentHost();
    const call = await oa.bridge.call('oa.blob', { bytes: 256 * 1024 - 1 });
    const result = await oa.bridge.result(call.call_id as string);
    expect((result.result as { content: Frame[] }).content[1]).toMatchObject({ type: 'image', data: pseudoRandom(256 * 1024 - 1).toString('base64') });
    expect(oa.bridge.framesOf('client_artifact_chunk')).toHaveLength(0);
  });

  it('sends a 16 MiB artifact to a paused reader without failing, then completes in order once it reads', async () => {
    // A reader paused for seconds also reads no heartbeats: a long interval keeps the watchdog out of it.
    await using oa = await startOpenAgentHost({ openagent: { heartbeatMs: 15_000 } });
    const bytes = 16 * 1024 * 1024;
    await oa.bridge.hello(1);
    const connection = oa.bridge.current()!;
    const tcp = (connection.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    tcp.pause();
    const call = await oa.bridge.call('oa.blob', { bytes, seed: 7 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const seenWhilePaused = oa.bridge.framesOf('client_artifact_chunk').length;
    expect(seenWhilePaused).toBeLessThan(32);
    expect(oa.host.status().openagent.activeCalls).toBe(1);
    tcp.resume();
    const result = await oa.bridge.result(call.call_id as string, { timeoutMs: 60_000 });
    const chunks = oa.bridge.framesOf('client_artifact_chunk').filter((chunk) => chunk.call_id === call.call_id);
    expect(chunks.map((chunk) => chunk.seq)).toEqual(Array.from({ length: 32 }, (_, index) => index));
    expect(createHash('sha256').update(reassemble(chunks)).digest('hex')).toBe(chunks[0]!.sha256);
    expect(result.error).toBeUndefined();
    await eventually(() => oa.host.status().openagent.activeCalls === 0, { what: 'the call to end' });
  }, 90_000);
});
