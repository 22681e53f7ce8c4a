import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInvoker, createRegistry, defineCapability } from '@capnode/capabilities';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BROWSER_UPLOAD_FILE_BYTES, MAX_BROWSER_UPLOAD_FILES, MAX_BROWSER_UPLOAD_TOTAL_BYTES } from '@capnode/capabilities/pack';
import { BROWSER_PROXY_MAX_FILE_BYTES, BROWSER_PROXY_MAX_FILES, BROWSER_PROXY_MAX_TOTAL_BYTES, checkProxyPath, createBrowserProxyCommand, createBrowserProxyUploadCommand, type BrowserProxyTarget } from './browserProxy.js';

const MiB = 1024 * 1024;

/** A stand-in browser-control service: answers each path with the JSON the test set, and counts requests. */
describe('browser.proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'capnode-browser-proxy-'));
  const mediaDir = join(dir, 'media');
  mkdirSync(mediaDir);
  const answers = new Map<string, { status: number; body: unknown }>();
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  let server: Server;
  let target: BrowserProxyTarget;
  let allowProfiles: string[] = [];
  const stalled: ServerResponse[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', auth: request.headers.authorization, body });
        if (new URL(request.url ?? '/', 'http://x').pathname === '/stall') {
          // Headers and half a body, then nothing: the deadline must cover reading the answer too.
          response.writeHead(200, { 'content-type': 'application/json' }).write('{"partial":');
          stalled.push(response);
          return;
        }
        if (new URL(request.url ?? '/', 'http://x').pathname === '/cut') {
          // Headers and half a body, then the connection drops.
          response.writeHead(200, { 'content-type': 'application/json' }).write('{"partial":', () => response.destroy());
          return;
        }
        const answer = answers.get(new URL(request.url ?? '/', 'http://x').pathname) ?? { status: 404, body: { error: 'not found' } };
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    target = { url: `http://127.0.0.1:${port}`, port, token: 'secret-token', mediaDir };
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const invoke = async (args: Record<string, unknown>, to: () => Promise<BrowserProxyTarget> = async () => target) => {
    const command = createBrowserProxyCommand({ target: to, expectedPort: () => 18791, allowProfiles: () => allowProfiles });
    const invoker = createInvoker({ registry: createRegistry([defineCapability({ category: 'browser', commands: [command] })]) });
    return (await invoker.invoke({ command: 'browser.proxy', args, transport: 'internal' })).result;
  };

  it('forwards method, path, query, body and the token, and answers { result }', async () => {
    answers.set('/tabs/open', { status: 200, body: { targetId: 't1', url: 'http://127.0.0.1/', title: 'x', type: 'page' } });
    seen.length = 0;
    const result = await invoke({ method: 'post', path: 'tabs/open', query: { a: 1, b: true, c: null }, body: { url: 'http://127.0.0.1/' }, profile: 'capnode' });
    expect(result).toMatchObject({ ok: true, structured: { result: { targetId: 't1' } } });
    expect(seen).toEqual([{ method: 'POST', url: '/tabs/open?profile=capnode&a=1&b=true', auth: 'Bearer secret-token', body: '{"url":"http://127.0.0.1/"}' }]);
  });

  it('times out on an answer whose body stalls after its headers, as a timeout error', async () => {
    const result = await invoke({ path: '/stall', timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    for (const response of stalled.splice(0)) response.end('0}');
  });

  it('fails, without claiming the service is unreachable, when an answer breaks off after its headers', async () => {
    const result = await invoke({ path: '/cut', timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: false, error: { code: 'failed', message: expect.stringContaining('broke off its answer to GET /cut (HTTP 200)') } });
  });

  it('refuses a URL as path (any spelling) with isError and sends nothing', async () => {
    seen.length = 0;
    for (const path of ['http://127.0.0.1:18791/tabs', 'HTTPS://example.com/', '//evil.example/tabs', 'file:///etc/passwd', 'javascript:alert(1)', '\\\\host\\share', ' http://x/']) {
      expect(await invoke({ path }), path).toMatchObject({ ok: false, error: { code: 'invalid_arguments', data: { reason: 'url_as_path' } } });
    }
    for (const path of ['/tabs?x=1', '/tabs#x', '/ta bs']) expect(await invoke({ path }), path).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(await invoke({ path: '/tabs', method: 'PUT' })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(await invoke({ path: '/tabs', upload: { envelope: 'browser-upload-v1', files: [{ name: 'a', contentBase64: 'YQ==' }] } })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(seen).toEqual([]);
    expect(checkProxyPath('snapshot')).toBe('/snapshot');
  });

  it("forwards OpenClaw's upload envelope as files of the file-chooser body, paths dropped; refuses bad envelopes and oversized files, sending nothing", async () => {
    answers.set('/hooks/file-chooser', { status: 200, body: { ok: true } });
    seen.length = 0;
    const file = (name: string, bytes: number) => ({ name, contentBase64: Buffer.alloc(bytes, 1).toString('base64') });
    const envelope = (...files: unknown[]) => ({ envelope: 'browser-upload-v1', files });
    const chooser = { method: 'POST', path: '/hooks/file-chooser', body: { ref: 'e3', paths: ['/gateway/media/a.txt'] } };
    expect(await invoke({ ...chooser, upload: envelope(file('a.txt', 3)) })).toMatchObject({ ok: true, structured: { result: { ok: true } } });
    expect(JSON.parse(seen[0]!.body)).toEqual({ ref: 'e3', files: [{ name: 'a.txt', contentBase64: 'AQEB' }] });
    seen.length = 0;
    const refusals: [unknown, string][] = [
      [envelope(file('big.bin', 10 * MiB + 1)), 'payload_too_large'],
      [envelope(file('a.bin', 9 * MiB), file('b.bin', 8 * MiB)), 'payload_too_large'],
      [envelope(), 'invalid_arguments'],
      [{ envelope: 'browser-upload-v2', files: [file('a.txt', 1)] }, 'invalid_arguments'],
      [envelope({ name: 'a.txt', contentBase64: 'YQ' }), 'invalid_arguments'],
      [envelope({ name: '', contentBase64: 'YQ==' }), 'invalid_arguments'],
      [envelope(...Array.from({ length: 257 }, (_, index) => file(`${index}.txt`, 1))), 'invalid_arguments'],
      ['not an envelope', 'invalid_arguments'],
    ];
    for (const [upload, code] of refusals) expect(await invoke({ ...chooser, upload })).toMatchObject({ ok: false, error: { code } });
    expect(await invoke({ method: 'POST', path: '/act', body: { kind: 'click', ref: 'e1' }, upload: envelope(file('a.txt', 1)) })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', data: { reason: 'upload' } } });
    expect(await invoke({ method: 'POST', path: '/hooks/file-chooser', body: { paths: ['https://example.com/a.txt'] } })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', data: { reason: 'url_as_path' } } });
    expect(seen).toEqual([]);

    // browser.proxy.upload.v1, the command OpenClaw's gateway sends uploads with: the same request, an envelope required.
    const upload = createBrowserProxyUploadCommand({ target: async () => target, expectedPort: () => 18791, allowProfiles: () => [] });
    const invoker = createInvoker({ registry: createRegistry([defineCapability({ category: 'browser', commands: [upload] })]) });
    const viaUpload = async (args: Record<string, unknown>) => (await invoker.invoke({ command: 'browser.proxy.upload.v1', args, transport: 'internal' })).result;
    expect(await viaUpload(chooser)).toMatchObject({ ok: false, error: { code: 'invalid_arguments', data: { reason: 'upload' } } });
    expect(seen).toEqual([]);
    const viaEnvelope = await viaUpload({ ...chooser, upload: envelope(file('b.txt', 2)) });
    expect(viaEnvelope, JSON.stringify(viaEnvelope)).toMatchObject({ ok: true, structured: { result: { ok: true } } });
    expect(JSON.parse(seen[0]!.body)).toEqual({ ref: 'e3', files: [{ name: 'b.txt', contentBase64: 'AQE=' }] });
  });

  it('checks the path the service will see: dot segments, encoded or not, are resolved first', async () => {
    expect(checkProxyPath('/tabs/../profiles')).toBe('/profiles');
    expect(checkProxyPath('/tabs/%2e%2e/profiles')).toBe('/profiles');
    expect(checkProxyPath('/tabs/%2E%2e/%2e/profiles')).toBe('/profiles');
    expect(checkProxyPath('../../profiles')).toBe('/profiles');
    allowProfiles = ['capnode'];
    try {
      answers.set('/profiles', { status: 200, body: { profiles: [{ name: 'capnode' }, { name: 'other' }] } });
      seen.length = 0;
      expect(await invoke({ path: '/tabs/%2e%2e/profiles' })).toMatchObject({ ok: true, structured: { result: { profiles: [{ name: 'capnode' }] } } });
      expect(seen.map((entry) => entry.url)).toEqual(['/profiles']);
    } finally {
      allowProfiles = [];
    }
  });

  it('checks a profile given in query like one given as profile', async () => {
    allowProfiles = ['capnode'];
    try {
      answers.set('/tabs', { status: 200, body: { running: false, tabs: [] } });
      seen.length = 0;
      expect(await invoke({ path: '/tabs', query: { profile: 'chrome' } })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: 'browser profile not allowed' } });
      expect(await invoke({ path: '/tabs', profile: 'capnode', query: { profile: 'chrome' } })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', data: { reason: 'profile_conflict' } } });
      expect(seen).toEqual([]);
      expect(await invoke({ path: '/tabs', query: { profile: 'capnode', targetId: 't1' } })).toMatchObject({ ok: true });
      expect(seen.map((entry) => entry.url)).toEqual(['/tabs?profile=capnode&targetId=t1']);
    } finally {
      allowProfiles = [];
    }
  });

  it('keeps to the allowed profiles: another profile is refused before sending; /profiles lists only allowed ones', async () => {
    allowProfiles = ['capnode'];
    try {
      seen.length = 0;
      expect(await invoke({ path: '/tabs', profile: 'chrome' })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: 'browser profile not allowed' } });
      expect(seen).toEqual([]);
      answers.set('/tabs', { status: 200, body: { running: false, tabs: [] } });
      expect(await invoke({ path: '/tabs' })).toMatchObject({ ok: true });
      answers.set('/profiles', { status: 200, body: { profiles: [{ name: 'capnode' }, { name: 'other' }] } });
      expect(await invoke({ path: '/profiles' })).toMatchObject({ ok: true, structured: { result: { profiles: [{ name: 'capnode' }] } } });
    } finally {
      allowProfiles = [];
    }
  });

  it('answers route failures as isError with their code, or in the browser-v1 envelope when asked', async () => {
    answers.set('/act', { status: 400, body: { error: 'Unknown ref "e9"', code: 'invalid_arguments' } });
    expect(await invoke({ path: '/act', method: 'POST', body: { kind: 'click', ref: 'e9' } })).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: 'Unknown ref "e9"' } });
    answers.set('/act', { status: 403, body: { error: 'browser access is off', code: 'consent_required' } });
    expect(await invoke({ path: '/act', method: 'POST' })).toMatchObject({ ok: false, error: { code: 'consent_required' } });
    expect(await invoke({ path: '/act', method: 'POST', errorEnvelope: 'browser-v1' })).toMatchObject({ ok: true, structured: { error: { status: 403, body: { error: 'browser access is off' } } } });
  });

  it('says "Browser control host is not reachable" when the service cannot start or does not answer', async () => {
    const notStarted = await invoke({ path: '/' }, async () => Promise.reject(new Error('no Chromium')));
    expect(notStarted).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/^Browser control host is not reachable on 127\.0\.0\.1:18791\./) } });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await invoke({ path: '/' }, async () => ({ ...target, url: `http://127.0.0.1:${port}`, port }));
    expect(refused).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringContaining(`Browser control host is not reachable on 127.0.0.1:${port}`) } });
  });

  it('carries the answer files as base64: each ≤ 10 MiB, ≤ 16 MiB together, ≤ 24 MiB encoded; only files of the service', async () => {
    const file = (name: string, bytes: number) => {
      const path = join(mediaDir, name);
      writeFileSync(path, Buffer.alloc(bytes, 7));
      return path;
    };
    const shot = file('shot.png', 1000);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: shot, targetId: 't1' } });
    expect(await invoke({ path: '/screenshot', method: 'POST' })).toMatchObject({ ok: true, structured: { result: { path: shot }, files: [{ path: shot, mimeType: 'image/png', base64: Buffer.alloc(1000, 7).toString('base64') }] } });

    const limit = file('limit.png', BROWSER_PROXY_MAX_FILE_BYTES);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: limit } });
    expect((await invoke({ path: '/screenshot', method: 'POST' })).ok).toBe(true);
    const over = file('over.png', BROWSER_PROXY_MAX_FILE_BYTES + 1);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: over } });
    expect(await invoke({ path: '/screenshot', method: 'POST' })).toMatchObject({ ok: false, error: { code: 'payload_too_large', message: 'browser proxy file exceeds 10 MiB limit' } });

    const a = file('a.png', 8 * MiB);
    const b = file('b.png', 8 * MiB);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: a, imagePath: b } });
    expect((await invoke({ path: '/screenshot', method: 'POST' })).ok).toBe(true);
    const c = file('c.png', 8 * MiB + 1);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: a, imagePath: c } });
    expect(await invoke({ path: '/screenshot', method: 'POST' })).toMatchObject({ ok: false, error: { code: 'payload_too_large', message: 'browser proxy files exceed 16 MiB aggregate limit' } });

    // 9 MiB of file (12 MiB as base64) and 13 MiB of result: over 24 MiB encoded.
    const nine = file('nine.png', 9 * MiB);
    answers.set('/screenshot', { status: 200, body: { ok: true, path: nine, note: 'x'.repeat(13 * MiB) } });
    expect(await invoke({ path: '/screenshot', method: 'POST' })).toMatchObject({ ok: false, error: { code: 'payload_too_large', message: 'browser proxy payload exceeds 24 MiB encoded limit' } });

    for (const path of ['/etc/passwd', join(mediaDir, '..', 'outside.png'), join(mediaDir, 'missing.png'), mediaDir]) {
      answers.set('/screenshot', { status: 200, body: { ok: true, path } });
      expect(await invoke({ path: '/screenshot', method: 'POST' }), path).toMatchObject({ ok: false, error: { code: 'failed', message: expect.stringMatching(/^browser proxy file read failed/) } });
    }
  });
});

describe('browser.proxy limits', () => {
  it('are the limits browser.upload holds (OpenClaw\'s browser-proxy limits), so an upload is refused the same on either path', () => {
    expect([BROWSER_PROXY_MAX_FILE_BYTES, BROWSER_PROXY_MAX_TOTAL_BYTES, BROWSER_PROXY_MAX_FILES]).toEqual([MAX_BROWSER_UPLOAD_FILE_BYTES, MAX_BROWSER_UPLOAD_TOTAL_BYTES, MAX_BROWSER_UPLOAD_FILES]);
  });
});
