import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, runCli, spawnCli, startServe, slowPoll, tempHome } from './helpers.js';
import { eventually } from '../support/poll.js';
import { freePort } from '../support/net.js';

const posix = process.platform !== 'win32';

function json<T = Record<string, unknown>>(text: string): T {
  return JSON.parse(text) as T;
}

describe('capnode basics', () => {
  it('prints help and version', async () => {
    using dir = tempHome();
    const help = await runCli(['--help'], dir.home);
    expect(help.code).toBe(0);
    for (const word of ['serve', 'mcp', '--list-tools', '--command', 'token show|path|rotate', 'approvals allow', 'config claude']) expect(help.stdout).toContain(word);
    const version = await runCli(['--version'], dir.home);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^capnode \d+\.\d+\.\d+/);
  });

  it('rejects unknown commands and flags with exit code 2', async () => {
    using dir = tempHome();
    const command = await runCli(['frobnicate'], dir.home);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'frobnicate'");
    const option = await runCli(['--list-tols'], dir.home);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('did you mean --list-tools?');
    const misplaced = await runCli(['token', 'show', '--port', '1'], dir.home);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--port does not apply to capnode token');
  });

  it('says how to start a host when none is running', async () => {
    using dir = tempHome();
    const port = await freePort();
    const result = await runCli(['--list-tools', '--url', `http://127.0.0.1:${port}/`], dir.home);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`no capnode host on http://127.0.0.1:${port}/ — start one with: capnode serve --port ${port}`);
    const approvals = await runCli(['approvals', 'list', '--url', `http://127.0.0.1:${port}/`], dir.home);
    expect(approvals.code).toBe(3);
    expect(approvals.stderr).toContain('start one with: capnode serve');
  });

  it('reports invalid --params JSON with the position before contacting any host', async () => {
    using dir = tempHome();
    const result = await runCli(['--command', 'system.which', '--params', '{"bins":["node"],}'], dir.home);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--params is not valid JSON: .*position 17/);
    expect(result.stderr).toContain('^');
  });

  it('stops with the file and key named when settings.json is invalid', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { port: 'eighty' } }));
    const result = await runCli(['serve', '--port', '0'], dir.home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(join(dir.home, 'settings.json'));
    expect(result.stderr).toContain('mcp.port');
    expect(readFileSync(join(dir.home, 'settings.json'), 'utf8')).toBe(JSON.stringify({ mcp: { port: 'eighty' } }));
  });

  it('refuses to serve when settings.json disables MCP', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { enabled: false } }));
    const result = await runCli(['serve', '--port', '0'], dir.home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the MCP server is off (mcp.enabled: false in');
    expect(result.stderr).toContain('mcp.enabled');
  });

  it('refuses a non-loopback address', async () => {
    using dir = tempHome();
    const result = await runCli(['serve', '--port', '0', '--host', '0.0.0.0'], dir.home);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/loopback/);
  });
});

describe('capnode against a running host', () => {
  it('serves, lists, calls, reports errors, and shuts down cleanly', async () => {
    using dir = tempHome();
    const serve = await startServe(dir.home);
    try {
      expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(serve.stdout()).toContain(`token file:     ${join(dir.home, 'mcp-token')}`);
      const runtime = json<{ url: string; pid: number }>(readFileSync(join(dir.home, 'host.json'), 'utf8'));
      expect(runtime.url).toBe(serve.url);
      expect(runtime.pid).toBe(serve.child.pid);
      if (posix) {
        expect(statSync(join(dir.home, 'mcp-token')).mode & 0o777).toBe(0o600);
        expect(statSync(join(dir.home, 'admin-token')).mode & 0o777).toBe(0o600);
      }

      // The CLI finds the host on its random port through host.json.
      const list = await runCli(['--list-tools'], dir.home);
      expect(list.code, list.stderr).toBe(0);
      for (const name of ['device.info', 'system.run', 'system.which', 'app.status']) expect(list.stdout).toMatch(new RegExp(`^${name.replace('.', '\\.')}\\s`, 'm'));
      const listJson = json<{ tools: { name: string; inputSchema: unknown }[] }>((await runCli(['--list-tools', '--json'], dir.home)).stdout);
      expect(listJson.tools.find((tool) => tool.name === 'system.which')?.inputSchema).toMatchObject({ type: 'object' });

      const which = await runCli(['--command', 'system.which', '--params', '{"bins":["node"]}', '--json'], dir.home);
      expect(which.code, which.stderr).toBe(0);
      const whichResult = json<{ isError?: boolean; content: { type: string; text: string }[] }>(which.stdout);
      expect(whichResult.isError ?? false).toBe(false);
      expect(whichResult.content[0]!.text).toContain('node');

      const info = await runCli(['--command', 'device.info'], dir.home);
      expect(info.code, info.stderr).toBe(0);
      expect(info.stdout.length).toBeGreaterThan(2);

      const status = json<{ mcp: { state: string; url: string; tokenPath: string }; capabilities: { commands: number } }>(
        (await runCli(['status', '--json'], dir.home)).stdout,
      );
      expect(status.mcp).toMatchObject({ state: 'listening', url: serve.url, tokenPath: join(dir.home, 'mcp-token') });
      expect(status.capabilities.commands).toBe(listJson.tools.length);

      const unknown = await runCli(['--command', 'sytem.run'], dir.home);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("unknown tool 'sytem.run' — did you mean: system.run");
      expect(unknown.stderr).toContain('capnode --list-tools');

      const badArgs = await runCli(['--command', 'system.which', '--params', '{"bins":"node"}'], dir.home);
      expect(badArgs.code).toBe(1);
      expect(badArgs.stderr).toMatch(/system\.which failed: .*bins/);

      const wrongToken = await runCli(['--list-tools', '--token', 'not-the-token'], dir.home);
      expect(wrongToken.code).toBe(4);
      expect(wrongToken.stderr).toContain('refused the token (HTTP 401)');
      expect(wrongToken.stderr).toContain('capnode token show');

      const { rmSync } = await import('node:fs');
      const token = readFileSync(join(dir.home, 'mcp-token'), 'utf8');
      rmSync(join(dir.home, 'mcp-token'));
      const noTokenFile = await runCli(['--list-tools'], dir.home);
      expect(noTokenFile.code).toBe(4);
      expect(noTokenFile.stderr).toContain(`No token file at ${join(dir.home, 'mcp-token')}`);
      writeFileSync(join(dir.home, 'mcp-token'), token, { mode: 0o600 });
    } finally {
      expect(await serve.stop('SIGTERM')).toBe(0);
    }
    expect(serve.stderr()).toContain('draining');
    expect(existsSync(join(dir.home, 'host.json'))).toBe(false);
    // Without host.json the CLI falls back to the port in settings.json.
    const port = await freePort();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { port } }));
    const after = await runCli(['--list-tools'], dir.home);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain(`no capnode host on http://127.0.0.1:${port}/ — start one with: capnode serve --port ${port}`);
  });

  it('says the port is taken when another process holds it', async () => {
    using dir = tempHome();
    await using first = await startServe(dir.home);
    const port = new URL(first.url).port;
    using other = tempHome();
    const second = await runCli(['serve', '--port', port], other.home);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
  });

  it('shows, locates and rotates the token', async () => {
    using dir = tempHome();
    const path = await runCli(['token', 'path'], dir.home);
    expect(path.stdout.trim()).toBe(join(dir.home, 'mcp-token'));
    const shown = await runCli(['token', 'show'], dir.home);
    expect(shown.code).toBe(0);
    const first = shown.stdout.trim();
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await runCli(['token', 'show'], dir.home)).stdout.trim()).toBe(first);

    // Offline rotation rewrites the file.
    const offline = await runCli(['token', 'rotate'], dir.home);
    expect(offline.code, offline.stderr).toBe(0);
    const second = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    expect(second).not.toBe(first);
    expect(offline.stdout.trim()).toBe(second);

    // Online rotation: the running host switches to the new token at once.
    await using serve = await startServe(dir.home);
    expect((await runCli(['--list-tools', '--token', second], dir.home)).code).toBe(0);
    const online = await runCli(['token', 'rotate'], dir.home);
    expect(online.code, online.stderr).toBe(0);
    const third = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    expect(third).not.toBe(second);
    expect((await runCli(['--list-tools', '--token', second], dir.home)).code).toBe(4);
    expect((await runCli(['--list-tools'], dir.home)).code).toBe(0);
    expect(serve.url).toBeTruthy();
  });

  it('answers exec approvals from another process: allow, deny, allow always', async () => {
    using dir = tempHome();
    await using serve = await startServe(dir.home);
    const pending = async () => json<{ approvals: { id: string; command: string; commandLine: string }[] }>((await runCli(['approvals', 'list', '--json'], dir.home)).stdout).approvals;
    const script = 'console.log(6*7)';
    const params = JSON.stringify({ command: [process.execPath, '-e', script] });

    // allow once
    const call = spawnCli(['--command', 'system.run', '--params', params, '--json'], dir.home);
    const done = completion(call);
    const [approval] = await eventually(async () => ((await pending()).length ? await pending() : undefined), slowPoll('a pending approval'));
    expect(approval!.command).toBe('system.run');
    expect(approval!.commandLine).toContain('6*7');
    await serve.waitForStderr(new RegExp(`capnode approvals allow ${approval!.id}`));
    const human = await runCli(['approvals', 'list'], dir.home);
    expect(human.stdout).toContain(approval!.id);
    const allowed = await runCli(['approvals', 'allow', approval!.id], dir.home);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain(`allowed once: ${approval!.id}`);
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(json<{ structuredContent: { stdout: string; exitCode: number } }>(result.stdout).structuredContent).toMatchObject({ stdout: '42\n', exitCode: 0 });

    // an answered id is gone
    const again = await runCli(['approvals', 'allow', approval!.id], dir.home);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no pending approval '${approval!.id}'`);

    // deny
    const denied = completion(spawnCli(['--command', 'system.run', '--params', params], dir.home));
    const [second] = await eventually(async () => ((await pending()).length ? await pending() : undefined), slowPoll('a second pending approval'));
    expect((await runCli(['approvals', 'deny', second!.id], dir.home)).code).toBe(0);
    const deniedResult = await denied;
    expect(deniedResult.code).toBe(1);
    expect(deniedResult.stderr).toMatch(/system\.run failed: .*(denied|refused)/i);

    // allow always: persisted to settings.json, next identical call runs without asking
    const always = completion(spawnCli(['--command', 'system.run', '--params', params, '--json'], dir.home));
    const [third] = await eventually(async () => ((await pending()).length ? await pending() : undefined), slowPoll('a third pending approval'));
    expect((await runCli(['approvals', 'allow', third!.id, '--always'], dir.home)).code).toBe(0);
    expect((await always).code).toBe(0);
    const settings = json<{ execApprovals: { mode: string; allowlist: string[] } }>(readFileSync(join(dir.home, 'settings.json'), 'utf8'));
    // Sparse writes: the default mode stays implicit.
    expect(settings.execApprovals.mode ?? 'ask').toBe('ask');
    expect(settings.execApprovals.allowlist).toHaveLength(1);
    const direct = await runCli(['--command', 'system.run', '--params', params, '--json'], dir.home);
    expect(direct.code, direct.stderr).toBe(0);
    expect(await pending()).toEqual([]);

    // The MCP token cannot answer approvals.
    const mcpToken = readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim();
    const refused = await fetch(new URL('/_capnode/approvals', serve.url), { headers: { authorization: `Bearer ${mcpToken}` } });
    expect(refused.status).toBe(401);

    // Audit lines exist for the calls, without argument values.
    const audit = readFileSync(join(dir.home, 'audit.log'), 'utf8');
    expect(audit).toContain('"command":"system.run"');
    expect(audit).not.toContain('6*7');
  });

  it('cancels the call on the host when interrupted with Ctrl-C', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ execApprovals: { mode: 'full' } }));
    await using serve = await startServe(dir.home);
    const marker = join(dir.home, 'started');
    const script = `require('fs').writeFileSync(${JSON.stringify(marker)}, '1'); setTimeout(() => {}, 60000)`;
    const call = spawnCli(['--command', 'system.run', '--params', JSON.stringify({ command: [process.execPath, '-e', script] })], dir.home);
    const done = completion(call);
    await eventually(async () => (existsSync(marker) ? true : undefined), slowPoll('the command to start'));
    call.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('system.run cancelled');
    const outcome = await eventually(async () => {
      const lines = readFileSync(join(dir.home, 'audit.log'), 'utf8').trim().split('\n').filter(Boolean);
      return lines.map((line) => json<{ command: string; outcome: string }>(line)).find((line) => line.command === 'system.run');
    }, slowPoll('the audit line of the cancelled call'));
    expect(outcome.outcome).toBe('cancelled');
    expect(serve.url).toBeTruthy();
  });

  it('prints ready client configs', async () => {
    using dir = tempHome();
    await using serve = await startServe(dir.home);
    // Claude Code and Cursor each get a token of their own, named after them (capnode token list).
    const clientToken = (name: string) => {
      const store = JSON.parse(readFileSync(join(dir.home, 'mcp-tokens.json'), 'utf8')) as { tokens: { name: string; token: string }[] };
      return store.tokens.find((entry) => entry.name === name)!.token;
    };

    const claude = await runCli(['config', 'claude'], dir.home);
    expect(claude.code).toBe(0);
    expect(claude.stdout).toContain(`claude mcp add --transport http capnode ${serve.url} --header 'Authorization: Bearer ${clientToken('claude')}'`);
    const claudeJson = json<{ mcpServers: { capnode: { type: string; url: string; headers: Record<string, string> } } }>((await runCli(['config', 'claude', '--json'], dir.home)).stdout);
    expect(claudeJson.mcpServers.capnode).toEqual({ type: 'http', url: serve.url, headers: { Authorization: `Bearer ${clientToken('claude')}` } });

    const cursor = json<{ mcpServers: { capnode: { url: string; headers: Record<string, string> } } }>((await runCli(['config', 'cursor', '--json'], dir.home)).stdout);
    expect(cursor.mcpServers.capnode).toEqual({ url: `${serve.url}?toolNames=underscore`, headers: { Authorization: `Bearer ${clientToken('cursor')}` } });

    const vscode = json<{ servers: { capnode: { type: string; url: string; headers: Record<string, string> } }; inputs: { id: string; password: boolean }[] }>(
      (await runCli(['config', 'vscode', '--json'], dir.home)).stdout,
    );
    expect(vscode.servers.capnode).toMatchObject({ type: 'http', url: `${serve.url}?toolNames=underscore` });
    expect(vscode.servers.capnode.headers.Authorization).toBe('Bearer ${input:capnode-token}');
    expect(vscode.inputs[0]).toMatchObject({ id: 'capnode-token', password: true });

    const desktop = json<{ mcpServers: { capnode: { command: string; args: string[]; env?: Record<string, string> } } }>(
      (await runCli(['config', 'claude-desktop', '--json'], dir.home)).stdout,
    );
    expect(desktop.mcpServers.capnode.command).toBe(process.execPath);
    expect(desktop.mcpServers.capnode.args.at(-1)).toBe('mcp');
    expect(desktop.mcpServers.capnode.env).toEqual({ CAPNODE_HOME: dir.home });

    const unknown = await runCli(['config', 'emacs'], dir.home);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('claude|claude-desktop|cursor|vscode');
  });
});
