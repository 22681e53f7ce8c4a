import { describe, expect, it } from 'vitest';
import { checkCanvasUrl, isPrivateAddress, isPrivateHost, resolveHostedPath, resolvesPublic } from './canvasUrl.js';

/** Every spelling of this machine and its local network a URL can carry. */
const PRIVATE_SPELLINGS = [
  'http://127.0.0.1:8765/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://0177.0.0.1/',
  'http://0x7f.0.0.1/',
  'http://127.0.0.1./',
  'http://%31%32%37.0.0.1/',
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  'http://[fd12:3456::1]/',
  'http://[fe80::1]/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://localhost.:8080/',
  'http://app.localhost/',
  'http://printer.local/',
  'http://router/',
  'http://0.0.0.0/',
  'http://0/',
  'http://10.1.2.3/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/',
  'https://[::ffff:a9fe:a9fe]/',
];

describe('canvas URL policy', () => {
  it('refuses every private spelling for a remote caller, with CANVAS_URL_REFUSED', () => {
    for (const url of PRIVATE_SPELLINGS) {
      const decision = checkCanvasUrl(url, { remote: true });
      expect(decision, url).toMatchObject({ ok: false, code: 'denied', failure: 'CANVAS_URL_REFUSED' });
    }
  });

  it('lets a local caller open them', () => {
    for (const url of PRIVATE_SPELLINGS) expect(checkCanvasUrl(url, { remote: false }), url).toMatchObject({ ok: true });
    expect(checkCanvasUrl('http://2130706433/', { remote: false })).toEqual({ ok: true, url: 'http://127.0.0.1/' });
  });

  it('lets a remote caller open public hosts', () => {
    for (const url of ['https://example.com/', 'http://93.184.215.14/', 'https://[2606:4700::1111]/', 'https://1.1.1.1/x?y#z']) {
      expect(checkCanvasUrl(url, { remote: true }), url).toMatchObject({ ok: true });
    }
  });

  it('refuses other schemes, relative URLs, user info and empty input for everyone', () => {
    for (const remote of [true, false]) {
      for (const url of ['', '   ', 'javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,hi', 'chrome://settings', 'ftp://example.com/', '/relative', 'example.com', 'https://user:pw@example.com/', 'https://user@example.com/']) {
        expect(checkCanvasUrl(url, { remote }), `${url} remote=${remote}`).toMatchObject({ ok: false, code: 'invalid_arguments', failure: 'CANVAS_URL_INVALID' });
      }
    }
  });

  it("allows the connected gateway's canvas origin to a remote caller, and only that origin", () => {
    const gatewayCanvasUrl = 'http://127.0.0.1:18789/__openclaw__/cap/tok3n';
    expect(checkCanvasUrl('http://127.0.0.1:18789/__openclaw__/canvas/x.html', { remote: true, gatewayCanvasUrl })).toMatchObject({ ok: true });
    expect(checkCanvasUrl('http://127.0.0.1:18790/', { remote: true, gatewayCanvasUrl })).toMatchObject({ ok: false, failure: 'CANVAS_URL_REFUSED' });
    expect(checkCanvasUrl('http://localhost:18789/', { remote: true, gatewayCanvasUrl })).toMatchObject({ ok: false, failure: 'CANVAS_URL_REFUSED' });
  });

  it("resolves hosted /__openclaw__/ paths against the gateway's canvas surface", () => {
    expect(resolveHostedPath('/__openclaw__/canvas/a.html?x=1', 'https://gw.example/__openclaw__/cap/abc')).toBe('https://gw.example/__openclaw__/cap/abc/__openclaw__/canvas/a.html?x=1');
    expect(resolveHostedPath('/__openclaw__/a2ui/', 'http://gw.example:18789/')).toBe('http://gw.example:18789/__openclaw__/a2ui/');
    const gatewayCanvasUrl = 'http://127.0.0.1:18789/__openclaw__/cap/tok3n';
    expect(checkCanvasUrl('/__openclaw__/canvas/index.html', { remote: true, gatewayCanvasUrl })).toEqual({ ok: true, url: 'http://127.0.0.1:18789/__openclaw__/cap/tok3n/__openclaw__/canvas/index.html' });
    expect(checkCanvasUrl('/__openclaw__/canvas/index.html', { remote: true })).toMatchObject({ ok: false, code: 'unavailable', failure: 'CANVAS_HOST_NOT_CONFIGURED' });
  });

  it('classifies hosts and addresses', () => {
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('::ffff:8.8.8.8')).toBe(false);
    expect(isPrivateAddress('::ffff:10.0.0.1')).toBe(true);
    expect(isPrivateAddress('not an address')).toBe(false);
    expect(isPrivateHost('example.com')).toBe(false);
    expect(isPrivateHost('127.0.0.1.nip.io')).toBe(false);
    expect(isPrivateHost('[fc00::1]')).toBe(true);
  });

  it('refuses a public name that resolves to this machine, and lets an unresolvable one through', async () => {
    const lookup = async (host: string) => {
      if (host === 'rebind.example') return ['93.184.215.14', '127.0.0.1'];
      if (host === 'public.example') return ['93.184.215.14', '2606:4700::1111'];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    expect(await resolvesPublic(new URL('http://rebind.example/'), lookup)).toBe(false);
    expect(await resolvesPublic(new URL('http://public.example/'), lookup)).toBe(true);
    expect(await resolvesPublic(new URL('http://nowhere.example/'), lookup)).toBe(true);
    expect(await resolvesPublic(new URL('http://[::1]/'), lookup)).toBe(false);
    expect(await resolvesPublic(new URL('http://localhost/'), lookup)).toBe(false);
  });
});
