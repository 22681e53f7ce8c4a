import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineCapability, defineCommand } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { signIn } from '../dashboard/apiClient.js';
import { startTestHost } from '../support/testHost.js';

const peek = defineCapability({
  category: 'screen',
  commands: [defineCommand({ name: 'peek.screen', description: 'stands in for a screen command', consent: 'screen', execute: () => 'peeked' })],
});

describe('consent settings under attack (real host)', () => {
  it('a hand edit with a bad value refuses every consent call with a clear error; fixing the file applies to the next call', async () => {
    await using t = await startTestHost({ settings: { consent: { screen: 'allow' } }, host: { capabilities: [peek], builtinPlugins: false } });
    expect((await t.call('peek.screen', {})).text).toBe('peeked');
    const file = join(t.home, 'settings.json');
    const good = readFileSync(file, 'utf8');
    for (const bad of [{ screen: 'yes' }, { screen: 'ALLOW' }, { screen: true }, { allowed: [{ command: 'peek.screen', category: 'everything' }] }, { screen: 'allow', extra: 1 }]) {
      writeFileSync(file, JSON.stringify({ ...JSON.parse(good), consent: bad }));
      const refused = await t.call('peek.screen', {});
      expect(refused.isError, JSON.stringify(bad)).toBe(true);
      expect(refused.text).toContain('consent settings cannot be read');
    }
    // Half-written JSON (a race with an editor) grants nothing either.
    writeFileSync(file, good.slice(0, 10));
    expect((await t.call('peek.screen', {})).isError).toBe(true);
    writeFileSync(file, good);
    expect((await t.call('peek.screen', {})).text).toBe('peeked');
  });

  it('the dashboard turns consent on only with its Origin and CSRF token; a grant for one command covers no other', async () => {
    await using t = await startTestHost({ host: { capabilities: [peek], builtinPlugins: false } });
    const client = await signIn(t.host, t.home);
    const body = JSON.stringify({ consent: { screen: 'allow' } });
    const noCsrf = await fetch(`${client.base}/api/settings`, { method: 'PATCH', headers: { cookie: client.cookie, origin: client.origin, 'content-type': 'application/json' }, body });
    expect(noCsrf.status).toBe(403);
    const grant = await fetch(`${client.base}/api/settings`, { method: 'PATCH', headers: { cookie: client.cookie, 'x-csrf-token': client.csrfToken, 'content-type': 'application/json' }, body });
    expect(grant.status).toBe(403);
    expect(t.host.settings.reload().consent.screen).toBe('off');
    expect((await t.call('peek.screen', {})).isError).toBe(true);
    // With both, it applies to the next call.
    expect((await client.api('/api/settings', { method: 'PATCH', body: { consent: { screen: 'ask', allowed: [{ command: 'screen.snapshot', category: 'screen' }] } } })).status).toBe(200);
    t.answerWith('deny');
    const asked = await t.call('peek.screen', {});
    expect(asked.isError).toBe(true);
    expect(t.asked.map((approval) => approval.command)).toEqual(['peek.screen']);
  });
});
