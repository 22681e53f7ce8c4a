import { describe, expect, it } from 'vitest';
import type { Capability, CommandContext } from '../contract.js';
import { createBrowserPlugin } from './browser.js';

describe('createBrowserPlugin', () => {
  it('warns once per invalid files setting, not on every browser.upload', async () => {
    let filesSettings: Record<string, unknown> = { roots: '/srv/docs' };
    const warnings: string[] = [];
    const abort = new AbortController();
    const plugin = createBrowserPlugin(() => filesSettings);
    const capability = (await plugin({ name: 'browser', settings: {}, log: (_level, message) => warnings.push(message), dataDir: '/tmp/capnode-browser-test', configDir: '/tmp/capnode-config', signal: abort.signal })) as Capability;
    const upload = capability.commands.find((command) => command.name === 'browser.upload')!;
    const ctx = { signal: abort.signal, progress: () => {}, log: () => {}, request: {} } as unknown as CommandContext;
    // Every file is checked before the browser is reached, so these fail without starting Chromium.
    const attempt = () => Promise.resolve(upload.execute({ tabId: 't1', ref: 'e1', paths: ['/srv/docs/a.txt'] }, ctx)).catch(() => undefined);
    await attempt();
    await attempt();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/roots/);
    filesSettings = { roots: 42 };
    await attempt();
    await attempt();
    expect(warnings).toHaveLength(2);
    abort.abort();
  });
});
