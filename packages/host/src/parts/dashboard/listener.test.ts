import { describe, expect, it } from 'vitest';
import { isLoopbackAddress as isLoopbackPeer } from '@capnode/toolkit';
import { DASHBOARD_MAX_BODY, startDashboardListener } from './listener.js';

describe('dashboard listener', () => {
  it('serves on loopback with its origin and Host, and hands the body over', async () => {
    await using listener = await startDashboardListener({
      port: 0,
      handle: async (request) => new Response(JSON.stringify({ method: request.method, host: request.headers.get('host'), body: await request.text() }), { headers: { 'set-cookie': 'a=1' } }),
    });
    expect(listener.origin).toBe(`http://127.0.0.1:${listener.port}`);
    expect(listener.hostHeader).toBe(`127.0.0.1:${listener.port}`);
    const response = await fetch(`${listener.origin}/x`, { method: 'POST', body: 'hello' });
    expect(await response.json()).toEqual({ method: 'POST', host: listener.hostHeader, body: 'hello' });
    expect(response.headers.getSetCookie()).toEqual(['a=1']);
  });

  it('refuses a body over 1 MiB while reading it', async () => {
    await using listener = await startDashboardListener({
      port: 0,
      handle: async (request) => {
        try {
          await request.text();
          return new Response('read');
        } catch {
          return new Response('too large', { status: 413 });
        }
      },
    });
    const response = await fetch(`${listener.origin}/`, { method: 'POST', body: 'x'.repeat(DASHBOARD_MAX_BODY + 1) }).catch(() => undefined);
    // Either the 413 arrives, or the socket is cut while the client still sends: never a read.
    if (response) expect(response.status).toBe(413);
  });

  it('close ends streams that stop on the signal, and cuts one that ignores it after the drain time', async () => {
    const listener = await startDashboardListener({
      port: 0,
      drainTimeoutMs: 200,
      handle: async (request, { signal }) => {
        const polite = new URL(request.url).pathname === '/polite';
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('open\n'));
            if (polite) signal.addEventListener('abort', () => controller.close());
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      },
    });
    const polite = await fetch(`${listener.origin}/polite`);
    const stubborn = await fetch(`${listener.origin}/stubborn`);
    const politeText = polite.text();
    const stubbornText = stubborn.text().catch(() => 'cut');
    const started = Date.now();
    await listener.close();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await politeText).toBe('open\n');
    expect(await stubbornText).toMatch(/cut|open/);
    await expect(fetch(`${listener.origin}/polite`)).rejects.toThrow();
  });

  it('tells loopback peers from others', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackPeer(address)).toBe(true);
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'fe80::1', undefined]) expect(isLoopbackPeer(address)).toBe(false);
  });
});
