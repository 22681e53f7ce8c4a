import { chmodSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { runCli, startServe, tempHome } from './helpers.js';
import { freePort } from '../support/net.js';

const posix = process.platform !== 'win32';

/** A real SDK v1 client holding `token`. */
async function connectV1(url: string, token: string): Promise<ClientV1> {
  const client = new ClientV1({ name: 'rotate-probe', version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

describe('two hosts on one directory', () => {
  it('the second `capnode serve` fails naming the pid and URL of the first; after the first stops, it starts', async () => {
    using dir = tempHome();
    const first = await startServe(dir.home);
    const second = await runCli(['serve', '--port', '0'], dir.home);
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toContain(`another capnode host already runs with the config directory ${dir.home}: pid ${first.child.pid} (MCP on ${first.url}`);
    // The refused host removed nothing of the running one's.
    expect(JSON.parse(readFileSync(join(dir.home, 'host.json'), 'utf8'))).toMatchObject({ pid: first.child.pid, url: first.url });
    expect((await runCli(['--list-tools'], dir.home)).code).toBe(0);

    expect(await first.stop()).toBe(0);
    expect(existsSync(join(dir.home, 'run', 'host.lock'))).toBe(false);
    await using third = await startServe(dir.home);
    expect(third.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it('a host killed hard leaves a stale lock the next host takes over, saying so', async () => {
    using dir = tempHome();
    const crashed = await startServe(dir.home);
    expect(await crashed.stop('SIGKILL')).toBe(null);
    expect(existsSync(join(dir.home, 'run', 'host.lock'))).toBe(true);
    await using next = await startServe(dir.home);
    expect(next.stderr()).toContain(`removed the stale lock of pid ${crashed.child.pid} (no longer running)`);
  });
});

describe('capnode token rotate', () => {
  it('revokes the old token in the running host at once: a connected real client gets 401 right after', async () => {
    using dir = tempHome();
    await using serve = await startServe(dir.home);
    const old = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    const client = await connectV1(serve.url, old);
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      const rotated = await runCli(['token', 'rotate'], dir.home);
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(rotated.stderr).toContain(`the running host at ${serve.url} now accepts only the new token`);
      const fresh = rotated.stdout.trim();
      expect(fresh).not.toBe(old);
      await expect(client.listTools()).rejects.toMatchObject({ code: 401 });
      const renewed = await connectV1(serve.url, fresh);
      expect((await renewed.listTools()).tools.length).toBeGreaterThan(0);
      await renewed.close();
    } finally {
      await client.close().catch(() => {});
    }
  });

  it.runIf(posix)('says plainly when the running host does not answer (stalled), and changes nothing', async () => {
    using dir = tempHome();
    await using serve = await startServe(dir.home);
    const old = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    serve.child.kill('SIGSTOP');
    let rotated;
    try {
      rotated = await runCli(['token', 'rotate'], dir.home);
      expect(readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim()).toBe(old);
    } finally {
      serve.child.kill('SIGCONT');
    }
    expect(rotated.code).toBe(1);
    expect(rotated.stdout).toBe('');
    expect(rotated.stderr).toContain(`the running host (pid ${serve.child.pid}, ${serve.url}) did not confirm the rotation within 5 s; nothing was changed here. It MAY STILL ACCEPT THE OLD TOKEN`);
  });

  it('says plainly when the host of host.json cannot be reached: the file is rotated, the host may still accept the old token', async () => {
    using dir = tempHome();
    expect((await runCli(['token', 'show'], dir.home)).code).toBe(0);
    const old = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    const url = `http://127.0.0.1:${await freePort()}/`;
    // A live pid (this test process) whose listener is gone: what a wedged host or a reused pid looks like.
    writeFileSync(join(dir.home, 'host.json'), JSON.stringify({ pid: process.pid, kind: 'http', url, adminUrl: `${url}_capnode/`, startedAt: new Date().toISOString(), version: 'test' }), { mode: 0o600 });
    const rotated = await runCli(['token', 'rotate'], dir.home);
    expect(rotated.code).toBe(1);
    const fresh = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    expect(fresh).not.toBe(old);
    expect(rotated.stdout.trim()).toBe(fresh);
    expect(rotated.stderr).toContain(`the token file is rotated, but the running host (pid ${process.pid}, ${url}) did not take the new token: no capnode host on ${url}_capnode/`);
    expect(rotated.stderr).toContain('Until that host restarts it MAY STILL ACCEPT THE OLD TOKEN');
  });
});

describe.runIf(posix)('token file attacks through the CLI', () => {
  it('refuses a token file symlinked to another file and never sends its content', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'secret'), 'ssh-private-key\n', { mode: 0o600 });
    symlinkSync(join(dir.home, 'secret'), join(dir.home, 'mcp-token'));
    const listed = await runCli(['--list-tools', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`refusing to use the token file ${join(dir.home, 'mcp-token')}: it is a symbolic link`);
    const served = await runCli(['serve', '--port', '0'], dir.home);
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(`refusing to use the token file ${join(dir.home, 'mcp-token')}: it is a symbolic link`);
    expect(readFileSync(join(dir.home, 'secret'), 'utf8')).toBe('ssh-private-key\n');
  });

  it('refuses a 0644 token with the chmod 600 fix, and works once fixed', async () => {
    using dir = tempHome();
    expect((await runCli(['token', 'show'], dir.home)).code).toBe(0);
    const path = join(dir.home, 'mcp-token');
    chmodSync(path, 0o644);
    const shown = await runCli(['token', 'show'], dir.home);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain(`refusing to use the token file ${path}: other users can access it (mode 0644); make it private with: chmod 600 ${path}`);
    chmodSync(path, 0o600);
    expect((await runCli(['token', 'show'], dir.home)).code).toBe(0);
  });
});
