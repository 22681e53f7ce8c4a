import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PendingApproval } from '@capnode/capabilities';
import { hostPaths } from '@capnode/host/setup';
import { describe, expect, it } from 'vitest';
import { createAttachedLink, createInProcessLink } from '../../apps/tray/src/hostLink.js';
import { isTrayError } from '../../apps/tray/src/errors.js';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';

const slow = { timeoutMs: 20_000 };

describe('the tray attached to a real host over its admin routes', () => {
  it('reads the status, follows approvals live (snapshot, requested, resolved), and ends the stream on close', async () => {
    await using test = await startTestHost({ clientName: 'tray-link-test' });
    const link = createAttachedLink(hostPaths(test.home));
    const status = await link.status();
    expect(status.mcp).toMatchObject({ state: 'listening', url: test.url });
    expect(link.mcpToken()).toMatch(/^\S{20,}$/);

    const seen: (readonly PendingApproval[])[] = [];
    const stop = link.watchApprovals((pending) => seen.push(pending));
    await eventually(() => seen.length > 0, { what: 'the snapshot', ...slow });
    expect(seen.at(-1)).toEqual([]);

    const call = test.call('system.run', { command: [process.execPath, '-e', 'console.log(1)'] });
    const pending = await eventually(() => seen.at(-1)?.[0], { what: 'the pending approval', ...slow });
    expect(pending.command).toBe('system.run');
    test.host.approvals.resolve(pending.id, 'deny');
    await eventually(() => seen.at(-1)?.length === 0, { what: 'the resolved event', ...slow });
    expect((await call).isError).toBe(true);
    stop();
    await link.close();
  });

  it('a wrong admin token is `unauthorized`; a stopped host is `host_unreachable` with the command that starts one', async () => {
    const test = await startTestHost();
    const paths = hostPaths(test.home);
    const link = createAttachedLink(paths);
    writeFileSync(paths.adminToken, 'not-the-admin-token\n', { mode: 0o600 });
    const refused = await link.status().catch((error: unknown) => error);
    expect(isTrayError(refused) && refused.code).toBe('unauthorized');
    expect((refused as Error).message).toMatch(/refused the admin token \(HTTP 401\)/);
    await test[Symbol.asyncDispose]();
    const gone = await link.status().catch((error: unknown) => error);
    expect(isTrayError(gone) && gone.code).toBe('host_unreachable');
    expect((gone as Error).message).toMatch(/capnode serve/);
  });

  it('no host at all: status is host_unreachable, and the approval stream keeps retrying quietly until stopped', async () => {
    using home = tempDir();
    const link = createAttachedLink(hostPaths(join(home.path, 'capnode')));
    await expect(link.status()).rejects.toMatchObject({ code: 'host_unreachable' });
    const stop = link.watchApprovals(() => {
      throw new Error('no events without a host');
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop();
    await link.close();
  });
});

describe('the tray running the host in process', () => {
  it('reads status and approvals from the host object; close stops the host', async () => {
    const test = await startTestHost({ clientName: 'tray-in-process' });
    const link = createInProcessLink(test.host);
    expect((await link.status()).mcp.state).toBe('listening');
    const seen: (readonly PendingApproval[])[] = [];
    const stop = link.watchApprovals((pending) => seen.push(pending));
    const call = test.call('system.run', { command: [process.execPath, '-e', '1'] });
    const pending = await eventually(() => seen.at(-1)?.[0], { what: 'the pending approval', ...slow });
    test.host.approvals.resolve(pending.id, 'deny');
    await call;
    stop();
    await link.close();
    expect(test.host.status().mcp.state).toBe('stopped');
    await test[Symbol.asyncDispose]();
  });
});

describe('pause / resume and gateway node mode through the real settings routes', () => {
  it('attached: pause stops the MCP listener, the tray finds the admin-only listener and resumes it; a bad patch is refused with the field', { timeout: 60_000 }, async () => {
    await using test = await startTestHost({ clientName: 'tray-pause' });
    const link = createAttachedLink(hostPaths(test.home));
    await link.patchSettings({ mcp: { enabled: false } });
    await eventually(() => test.host.status().mcp.state === 'disabled', { what: 'the listener paused', ...slow });
    expect((await link.status()).mcp.state).toBe('disabled');
    await link.patchSettings({ mcp: { enabled: true } });
    await eventually(() => test.host.status().mcp.state === 'listening', { what: 'the listener resumed', ...slow });
    expect((await link.status()).mcp.state).toBe('listening');
    const refused = await link.patchSettings({ gateway: { enabled: 'yes' } }).catch((error: unknown) => error);
    expect(isTrayError(refused) && refused.code).toBe('request_failed');
    expect((refused as Error).message).toMatch(/HTTP 400.*gateway\.enabled/);
    const login = await link.loginUrl();
    expect(login).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=/);
    await link.close();
  });

  it('in process: pause and resume through the host object, while no listener runs', { timeout: 60_000 }, async () => {
    await using test = await startTestHost({ clientName: 'tray-pause-in-process' });
    const link = createInProcessLink(test.host);
    await link.patchSettings({ mcp: { enabled: false } });
    expect((await link.status()).mcp.state).toBe('disabled');
    await link.patchSettings({ mcp: { enabled: true } });
    await eventually(async () => (await link.status()).mcp.state === 'listening', { what: 'the listener resumed', ...slow });
    await expect(link.patchSettings({ mcp: { port: -1 } })).rejects.toMatchObject({ code: 'request_failed' });
    expect(await link.loginUrl()).toMatch(/\/login\?code=/);
  });
});
