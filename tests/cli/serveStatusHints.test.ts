// `capnode serve` says where the dashboard is; `capnode status` shows the dashboard, plugins that
// failed (with their error) and commands that are unavailable here (with what to install).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, startServe, tempHome } from './helpers.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function writeSettings(home: string, settings: Record<string, unknown>): void {
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ approvals: { notify: false }, ...settings }), { mode: 0o600 });
}

describe('capnode serve and status: dashboard, plugins, unavailable commands', () => {
  it('serve prints the dashboard URL with `capnode ui`; status shows it, the failed plugin and the unavailable command', async () => {
    using dir = tempHome();
    writeSettings(dir.home, { plugins: [fixture('missingBackend.mjs'), fixture('refuses.mjs')] });
    await using serve = await startServe(dir.home);
    const json = JSON.parse((await runCli(['status', '--json'], dir.home)).stdout) as { dashboard: { state: string; url: string } };
    expect(json.dashboard).toMatchObject({ state: 'listening', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/) });
    expect(serve.stdout()).toContain(`  dashboard:      ${json.dashboard.url}   (open it: capnode ui)\n`);
    expect(serve.stdout()).toContain(`  plugin failed:  refuses (${fixture('refuses.mjs')}): `);

    const status = await runCli(['status'], dir.home);
    expect(status.code, status.stderr).toBe(0);
    const text = status.stdout;
    expect(text).toContain(`\nDashboard\n  state:          listening on ${json.dashboard.url}   (open it: capnode ui)\n`);
    expect(text).toMatch(/\nPlugins\n {2}loaded: +\d+ of \d+ {3}\(list them: capnode plugins list\)\n/);
    expect(text).toMatch(new RegExp(`\\n {2}failed: +refuses \\(${fixture('refuses.mjs').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\): .*the plugin refuses to start\\n`));
    expect(text).toMatch(/\n {2}unavailable: +\d+ commands? \(listed, fail until installed\)\n/);
    expect(text).toContain('\n    hint.gone: install the frobnicator (apt install frobnicator)\n');
    // The sections keep their order: MCP server, Dashboard, Gateway node, ..., Plugins, Approvals.
    const order = ['\nMCP server\n', '\nDashboard\n', '\nGateway node\n', '\nImported MCP servers\n', '\nPlugins\n', '\nApprovals\n', '\nAudit log\n'].map((section) => text.indexOf(section));
    expect(order.every((index, i) => index > 0 && (i === 0 || index > order[i - 1]!))).toBe(true);
  });

  it('with the dashboard turned off, serve and status say so and how to turn it on', async () => {
    using dir = tempHome();
    writeSettings(dir.home, { dashboard: { enabled: false } });
    await using serve = await startServe(dir.home);
    expect(serve.stdout()).toContain('  dashboard:      off   (dashboard.enabled: false in settings.json)\n');
    const text = (await runCli(['status'], dir.home)).stdout;
    expect(text).toContain('\nDashboard\n  state:          off   (turn it on: dashboard.enabled in settings.json)\n');
  });
});
