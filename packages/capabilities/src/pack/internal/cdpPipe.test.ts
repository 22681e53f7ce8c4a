import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CdpError, createCdpConnection, MAX_CDP_MESSAGE_BYTES } from './cdpPipe.js';

function pair() {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  const sent: Record<string, unknown>[] = [];
  toBrowser.on('data', (chunk: Buffer) => {
    for (const part of chunk.toString('utf8').split('\0').filter(Boolean)) sent.push(JSON.parse(part) as Record<string, unknown>);
  });
  return { cdp: createCdpConnection(toBrowser, fromBrowser), fromBrowser, sent };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('DevTools over the browser pipe', () => {
  it('frames commands with NUL, matches answers by id across split and joined chunks, and routes events with their session', async () => {
    const { cdp, fromBrowser, sent } = pair();
    const events: unknown[] = [];
    const stop = cdp.on('Page.loadEventFired', (params, sessionId) => events.push([params, sessionId]));
    const first = cdp.send('Target.getTargets');
    const second = cdp.send('Runtime.evaluate', { expression: '1' }, { sessionId: 'S1' });
    await flush();
    expect(sent).toEqual([
      { id: 1, method: 'Target.getTargets', params: {} },
      { id: 2, method: 'Runtime.evaluate', params: { expression: '1' }, sessionId: 'S1' },
    ]);
    const answer = Buffer.from(`${JSON.stringify({ id: 2, result: { v: 'é' } })}\0${JSON.stringify({ method: 'Page.loadEventFired', params: { t: 1 }, sessionId: 'S1' })}\0{"id":1,"result":{"targetInfos":[]}}\0`);
    // A multi-byte character split between chunks still decodes.
    const cut = answer.indexOf(0xa9);
    fromBrowser.write(answer.subarray(0, cut));
    fromBrowser.write(answer.subarray(cut));
    expect(await second).toEqual({ v: 'é' });
    expect(await first).toEqual({ targetInfos: [] });
    expect(events).toEqual([[{ t: 1 }, 'S1']]);
    stop();
  });

  it('rejects with the browser error, stops waiting on abort, and rejects everything once closed', async () => {
    const { cdp, fromBrowser } = pair();
    const failing = cdp.send('Page.navigate');
    fromBrowser.write(`${JSON.stringify({ id: 1, error: { code: -32000, message: 'Cannot navigate' } })}\0`);
    await expect(failing).rejects.toMatchObject({ name: 'CdpError', code: 'protocol', message: 'Cannot navigate' });
    const controller = new AbortController();
    const waiting = cdp.send('Runtime.evaluate', {}, { signal: controller.signal });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    const pending = cdp.send('Browser.getVersion');
    fromBrowser.end();
    fromBrowser.destroy();
    await expect(pending).rejects.toSatisfy((error: unknown) => CdpError.is(error) && error.code === 'closed');
    expect(cdp.isClosed).toBe(true);
    await expect(cdp.send('Browser.getVersion')).rejects.toMatchObject({ code: 'closed' });
  });

  it('closes on a message over the size limit', async () => {
    const { cdp, fromBrowser } = pair();
    const pending = cdp.send('Page.captureScreenshot');
    fromBrowser.write(Buffer.alloc(MAX_CDP_MESSAGE_BYTES + 1, 0x61));
    await expect(pending).rejects.toMatchObject({ code: 'too_large' });
  });
});
