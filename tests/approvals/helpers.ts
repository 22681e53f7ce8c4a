import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The host is not a dependency of the workspace root; its sources are imported directly (as the CLI would run them).
import { createHost, type Host, type HostOptions } from '../../packages/host/src/index.js';
import type { AnsweredApproval, PendingApproval } from '@capnode/capabilities';
import { eventually } from '../support/poll.js';

/** A real host on a loopback port in a temporary home, with its admin route at hand. */
export interface TestHost extends AsyncDisposable {
  readonly host: Host;
  readonly home: string;
  readonly url: string;
  readonly mcpToken: string;
  readonly logs: string[];
  /** `GET /_capnode/approvals` with the admin token. */
  pending(): Promise<PendingApproval[]>;
  /** `GET /_capnode/approvals`: the requests allowed for a retry that has not come yet. */
  allowed(): Promise<AnsweredApproval[]>;
  /** `POST /_capnode/approvals` with the admin token and the request's hash; the HTTP status. */
  answer(approval: PendingApproval, decision: 'allow-once' | 'allow-always' | 'deny'): Promise<number>;
}

/** Options of {@link startTestHost}: the host's, and the `settings.json` written before it starts. */
export interface TestHostOptions extends Partial<HostOptions> {
  readonly settings?: Record<string, unknown>;
}

export async function startTestHost(testOptions: TestHostOptions = {}): Promise<TestHost> {
  const { settings, ...options } = testOptions;
  const home = mkdtempSync(join(tmpdir(), 'capnode-approvals-'));
  if (settings) writeFileSync(join(home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
  const logs: string[] = [];
  const host = createHost({ home, port: 0, onLog: (level, message) => logs.push(`${level}: ${message}`), ...options });
  const status = await host.start();
  const url = status.mcp.url!;
  const adminToken = readFileSync(host.paths.adminToken, 'utf8').trim();
  const mcpToken = readFileSync(host.paths.mcpToken, 'utf8').trim();
  const adminUrl = new URL('/_capnode/approvals', url);
  return {
    host,
    home,
    url,
    mcpToken,
    logs,
    async pending() {
      const response = await fetch(adminUrl, { headers: { authorization: `Bearer ${adminToken}` } });
      return ((await response.json()) as { approvals: PendingApproval[] }).approvals;
    },
    async allowed() {
      const response = await fetch(adminUrl, { headers: { authorization: `Bearer ${adminToken}` } });
      return ((await response.json()) as { allowed: AnsweredApproval[] }).allowed;
    },
    async answer(approval, decision) {
      const response = await fetch(adminUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: approval.id, decision, argsHash: approval.argsHash }),
      });
      await response.text();
      return response.status;
    },
    async [Symbol.asyncDispose]() {
      await host.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Polls the admin route until a pending approval shows up. */
export function nextPending(test: TestHost, timeoutMs = 10_000): Promise<PendingApproval> {
  return eventually(async () => (await test.pending())[0], { what: 'a pending approval on the admin route', timeoutMs, intervalMs: 50 });
}

/** Text of a tool result's content. */
export function textOf(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  return (Array.isArray(content) ? (content as { text?: string }[]) : []).map((part) => part.text ?? '').join('\n');
}
