import { appendFileSync, chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, runCli, spawnCli, startServe, slowPoll, tempHome } from './helpers.js';
import { eventually } from '../support/poll.js';
import { freePort } from '../support/net.js';

interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

async function doctor(home: string, env: Record<string, string>, withText = false): Promise<{ code: number | null; checks: Check[]; text: string }> {
  const json = await runCli(['doctor', '--json'], home, env);
  const text = withText ? await runCli(['doctor'], home, env) : undefined;
  if (text) expect(text.code).toBe(json.code);
  return { code: json.code, checks: (JSON.parse(json.stdout) as { checks: Check[] }).checks, text: text?.stdout ?? '' };
}

/** An imported server's env value: a secret the host must scrub from every log line. */
const SECRET = 'capnode-test-secret-0123456789abcdef';

describe('capnode status, doctor and logs against a real host', () => {
  it('status prints sections for a terminal, --json the unchanged app.status; logs shows the host log', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ approvals: { wait: 'return', notify: false }, mcpClient: { reexport: true, servers: [{ name: 'broken', command: process.execPath, args: ['-e', 'console.error("key " + process.env.API_KEY); process.exit(3)'], env: { API_KEY: SECRET } }] } }), { mode: 0o600 });
    await using serve = await startServe(dir.home);
    const json = JSON.parse((await runCli(['status', '--json'], dir.home)).stdout) as { mcp: { url: string; state: string }; node: unknown; mcpClient: unknown };
    expect(json.mcp).toMatchObject({ url: serve.url, state: 'listening' });
    expect(Object.keys(json)).toEqual(expect.arrayContaining(['version', 'pid', 'mcp', 'stdio', 'capabilities', 'execApprovals', 'node', 'channel', 'mcpClient', 'audit']));

    const text = await eventually(async () => {
      const result = await runCli(['status'], dir.home);
      return result.code === 0 && / {2}broken: failed /.test(result.stdout) && result.stdout;
    }, slowPoll('status shows the failed server'));
    expect(text).toMatch(/\nMCP server\n {2}state: +listening on http:\/\/127\.0\.0\.1:\d+\//);
    for (const section of ['\nGateway node\n', '\nImported MCP servers\n', '\nApprovals\n', '\nAudit log\n']) expect(text).toContain(section);
    expect(text).toMatch(/ {2}broken: failed \(stdio\) — 0 tools\n {6}error: .*(exited|closed)/);
    expect(text).toContain('pending:        none');

    // A call that needs approval (mode ask, wait return) leaves a pending request: status lists it.
    const call = await runCli(['--command', 'system.run', '--params', '{"command":["echo","status-check"]}'], dir.home);
    expect(call.code).toBe(1);
    const pending = await runCli(['status'], dir.home);
    expect(pending.stdout).toMatch(/pending: +1 +\(answer: capnode approvals watch\)\n {2}[a-z2-7]{10} {2}echo status-check {2}\(denied in \d+ s\)/);
    expect(text).not.toContain('{');

    const logs = await runCli(['logs', '-n', '200'], dir.home);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/^\S+Z info \[\d+\] capnode \S+ started \(pid \d+\): MCP on http:\/\/127\.0\.0\.1:\d+\//m);
    const token = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    const file = readFileSync(join(dir.home, 'logs', 'host.log'), 'utf8');
    expect(file).toMatch(/ (error|warning) \[\d+\] .*broken/);
    expect(logs.stdout).toContain('echo status-check');
    expect(file).not.toContain(token);
    expect(file).not.toContain(SECRET);
    expect(statSync(join(dir.home, 'logs', 'host.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.home, 'logs')).mode & 0o777).toBe(0o700);
  });

  it('logs -f prints appended lines, follows a rotation and ends on SIGINT', async () => {
    using dir = tempHome();
    const path = join(dir.home, 'logs', 'host.log');
    mkdirSync(join(dir.home, 'logs'), { recursive: true });
    writeFileSync(path, 'one\ntwo\nthree\n');
    const child = spawnCli(['logs', '-f', '-n', '2'], dir.home);
    const done = completion(child);
    let out = '';
    child.stdout.on('data', (chunk: Buffer | string) => (out += String(chunk)));
    await eventually(() => out === 'two\nthree\n', slowPoll('tail'));
    appendFileSync(path, 'four\n');
    await eventually(() => out.includes('four\n'), slowPoll('appended line'));
    renameSync(path, `${path}.1`);
    writeFileSync(path, 'five\n');
    await eventually(() => out.includes('five\n'), slowPoll('line after rotation'));
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(out).toBe('two\nthree\nfour\nfive\n');
  });

  it('logs -f keeps the lines written just before a rotation (appended, renamed and replaced between two polls)', async () => {
    using dir = tempHome();
    const path = join(dir.home, 'logs', 'host.log');
    mkdirSync(join(dir.home, 'logs'), { recursive: true });
    writeFileSync(path, 'one\n');
    const child = spawnCli(['logs', '-f', '-n', '1'], dir.home);
    const done = completion(child);
    let out = '';
    child.stdout.on('data', (chunk: Buffer | string) => (out += String(chunk)));
    await eventually(() => out === 'one\n', slowPoll('tail'));
    // One synchronous run: no poll can see host.log between these three steps.
    appendFileSync(path, 'last before rotation\nunfinished');
    renameSync(path, `${path}.1`);
    writeFileSync(path, 'first after rotation\n');
    await eventually(() => out.includes('first after rotation\n'), slowPoll('line after rotation'));
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    expect(out).toBe('one\nlast before rotation\nunfinished\nfirst after rotation\n');
  });

  it('logs refuses a host.log that is not a file, with the fix, instead of an unexpected error', async () => {
    using dir = tempHome();
    const path = join(dir.home, 'logs', 'host.log');
    mkdirSync(path, { recursive: true });
    for (const args of [['logs'], ['logs', '-f']]) {
      const result = await runCli(args, dir.home);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${path} is not a file`);
      expect(result.stderr).not.toContain('unexpected error');
    }
  });

  it('doctor: ok for a running host, fails on a readable token and a port taken by another program, names client configs', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home, XDG_CONFIG_HOME: join(user.home, '.config'), PATH: process.env.PATH ?? '' };

    // No host: warnings only (exit 0), the port is free, no client points here. A port just found
    // free, not the default one, which a host of this machine may hold.
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { port: await freePort() } }), { mode: 0o600 });
    const cold = await doctor(dir.home, env, true);
    expect(cold.code).toBe(0);
    expect(cold.checks.find((check) => check.id === 'host')).toMatchObject({ status: 'warn', fix: expect.stringContaining('capnode serve') });
    expect(cold.checks.find((check) => check.id === 'clients')?.status).toBe('warn');
    expect(cold.checks.filter((check) => check.id.startsWith('backend:')).map((check) => check.id)).toEqual(
      expect.arrayContaining(['backend:ffmpeg', 'backend:clipboard', 'backend:tts', 'backend:stt', 'backend:notify', 'backend:location']),
    );
    expect(cold.text).toMatch(/^(ok {2}|warn|FAIL) {2}/m);

    // The configured port taken by a plain TCP server (not capnode): fail, naming the process.
    const sockets = new Set<import('node:net').Socket>();
    const squatter = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as { port: number }).port;
    // It also stands in for a gateway: gateway.url set (gateway node mode off) gets a TCP reachability check.
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { port }, gateway: { url: `ws://127.0.0.1:${port}` } }), { mode: 0o600 });
    try {
      const taken = await doctor(dir.home, env);
      expect(taken.code).toBe(1);
      const check = taken.checks.find((entry) => entry.id === 'port')!;
      expect(check.status).toBe('fail');
      if (process.platform === 'linux') expect(check.detail).toContain(`pid ${process.pid}`);
      expect(check.fix).toContain('mcp.port');
      expect(taken.checks.find((entry) => entry.id === 'gateway')).toMatchObject({ status: 'ok', detail: `ws://127.0.0.1:${port} accepts connections` });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
    const gone = await doctor(dir.home, env);
    expect(gone.checks.find((entry) => entry.id === 'gateway')).toMatchObject({ status: 'warn', detail: expect.stringContaining('connection refused') });
    writeFileSync(join(dir.home, 'settings.json'), '{}', { mode: 0o600 });

    await using serve = await startServe(dir.home);
    // A Cursor config pointing here (written by config --write), a Claude Code one pointing elsewhere.
    expect((await runCli(['config', 'cursor', '--write', '--yes'], dir.home, env)).code).toBe(0);
    writeFileSync(join(user.home, '.claude.json'), JSON.stringify({ mcpServers: { capnode: { type: 'http', url: 'http://127.0.0.1:1/' } } }));
    const warm = await doctor(dir.home, env);
    expect(warm.code).toBe(0);
    expect(warm.checks.find((check) => check.id === 'host')).toMatchObject({ status: 'ok', detail: expect.stringContaining(serve.url) });
    expect(warm.checks.find((check) => check.id === 'port')?.status).toBe('ok');
    expect(warm.checks.find((check) => check.id === 'client:cursor')).toMatchObject({ status: 'ok', detail: expect.stringContaining('this host') });
    expect(warm.checks.find((check) => check.id === 'client:claude')).toMatchObject({ status: 'warn', fix: 'capnode config claude --write' });

    // A token file others can read: fail with the chmod fix; (the file is the one the host uses).
    chmodSync(join(dir.home, 'mcp-token'), 0o644);
    const loose = await doctor(dir.home, env, true);
    expect(loose.code).toBe(1);
    expect(loose.checks.find((check) => check.id === 'mcp-token')).toMatchObject({ status: 'fail', fix: `chmod 600 ${join(dir.home, 'mcp-token')}` });
    expect(loose.text).toContain(`      fix: chmod 600 ${join(dir.home, 'mcp-token')}`);
  }, 120_000);
});
