import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createSystemCapability } from '@capnode/capabilities/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost } from '../support/packHost.js';
import { tempDir } from '../support/testHost.js';

/** A notify-send stand-in recording its argv, one argument a line (a real daemon is not part of the test machine). */
describe.runIf(process.platform === 'linux')('system.notify with OpenClaw fields over MCP', () => {
  const dir = tempDir('capnode-notify-');
  const bin = path.join(dir.path, 'bin');
  const out = path.join(dir.path, 'argv.txt');
  beforeAll(async () => {
    await mkdir(bin);
    await writeFile(path.join(bin, 'notify-send'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > "${out}"\n`);
    await chmod(path.join(bin, 'notify-send'), 0o755);
  });
  afterAll(() => dir[Symbol.dispose]());

  const start = () => startPackHost([createSystemCapability({ env: { PATH: bin } })], { host: { builtins: false } });
  const argv = async () => (await readFile(out, 'utf8')).split('\n').slice(0, -1);

  it.each([
    ['passive', 'low'],
    ['active', 'normal'],
    ['timeSensitive', 'critical'],
  ])('maps priority %s to notify-send --urgency %s and answers { ok: true }', async (priority, urgency) => {
    await using host = await start();
    const result = await host.call('system.notify', { title: 'Build', body: 'done', priority });
    expect(result).toMatchObject({ isError: false, structured: { ok: true, urgency } });
    expect(await argv()).toEqual(['--urgency', urgency, '--app-name', 'capnode', '--', 'Build', 'done']);
  });

  it('passes sound as a sound-name hint, false as suppress-sound, and accepts delivery', async () => {
    await using host = await start();
    expect((await host.call('system.notify', { title: 't', body: 'b', sound: 'bell', delivery: 'overlay' })).structured).toMatchObject({ ok: true, delivery: 'system' });
    expect(await argv()).toEqual(['--urgency', 'normal', '--app-name', 'capnode', '--hint=string:sound-name:bell', '--', 't', 'b']);
    await host.call('system.notify', { title: 't', body: 'b', sound: false, priority: 'passive' });
    expect(await argv()).toEqual(['--urgency', 'low', '--app-name', 'capnode', '--hint=boolean:suppress-sound:true', '--', 't', 'b']);
    await host.call('system.notify', { title: 't', sound: true });
    expect(await argv()).toEqual(['--urgency', 'normal', '--app-name', 'capnode', '--hint=string:sound-name:message-new-instant', '--', 't']);
  });

  it('refuses a sound name that could be read as another hint, and unknown priorities', async () => {
    await using host = await start();
    expect((await host.call('system.notify', { title: 't', sound: 'x --hint=int:transient:1' })).isError).toBe(true);
    expect((await host.call('system.notify', { title: 't', sound: 'a:b' })).isError).toBe(true);
    expect((await host.call('system.notify', { title: 't', priority: 'urgent' })).isError).toBe(true);
    expect((await host.call('system.notify', { title: 't', delivery: 'email' })).isError).toBe(true);
  });

  it('probes for notify-send at start, with an install hint', async () => {
    const notify = (env: NodeJS.ProcessEnv) => createSystemCapability({ env }).commands.find((command) => command.name === 'system.notify')!;
    expect(await notify({ PATH: bin }).availability!({})).toEqual({ available: true });
    expect(await notify({ PATH: path.join(dir.path, 'empty') }).availability!({})).toEqual({ available: false, install: expect.stringMatching(/libnotify-bin/) });
  });

  it('keeps the earlier urgency field; priority wins when both are given', async () => {
    await using host = await start();
    await host.call('system.notify', { title: 't', urgency: 'critical' });
    expect((await argv())[1]).toBe('critical');
    await host.call('system.notify', { title: 't', urgency: 'critical', priority: 'passive' });
    expect((await argv())[1]).toBe('low');
  });
});
