import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ApprovalDecision, PendingApproval } from '@capnode/capabilities';
import { createHost, type Host, type HostOptions } from '@capnode/host';
import { onTestFailed } from 'vitest';

/** A temporary directory (real path, symlinks resolved), removed on dispose (retrying a write that races the removal). */
export function tempDir(prefix = 'capnode-test-'): { readonly path: string; [Symbol.dispose](): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true, maxRetries: 5 }) };
}

/** A real SDK v2 client connected to `url` over streamable HTTP with the bearer `token`. */
export async function connectHttpClient(url: string, token: string, name = 'capnode-test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** The text and error flag of a `tools/call` result. */
export interface ToolOutcome {
  readonly isError: boolean;
  readonly text: string;
  readonly structured: Record<string, unknown> | undefined;
}

export interface TestHost extends AsyncDisposable {
  readonly host: Host;
  readonly home: string;
  readonly url: string;
  readonly client: Client;
  readonly logs: string[];
  /** Every approval request the host's broker received, in order. */
  readonly asked: PendingApproval[];
  /** Answers every later approval request with `decision` (or stops answering with `undefined`). */
  answerWith(decision: ApprovalDecision | undefined): void;
  /** Calls a tool through the real SDK v2 client over HTTP. */
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
}

export interface TestHostOptions {
  /** Written to `settings.json` before the host starts; `approvals.wait` defaults to `block` here. */
  readonly settings?: Record<string, unknown>;
  readonly host?: Partial<HostOptions>;
  readonly clientName?: string;
}

/** A failing test prints what its in-process host logged (the only account of a server-side cause). */
function printLogsIfTheTestFails(logs: readonly string[]): void {
  try {
    onTestFailed(() => {
      if (logs.length) console.error(`host log (${logs.length} lines):\n${logs.slice(-200).join('\n')}`);
    });
  } catch {
    // Started in a hook, not a test: no test to watch.
  }
}

/**
 * Starts a real host (`createHost`) in a temporary config directory on 127.0.0.1 port 0 and
 * connects a real MCP SDK v2 client to it over streamable HTTP with the host's token.
 */
export async function startTestHost(options: TestHostOptions = {}): Promise<TestHost> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-host-')));
  // Calls wait for their approval (the test answers in process) unless a test asks for another wait mode.
  const settings = { approvals: { wait: 'block' }, ...options.settings };
  writeFileSync(join(home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
  const logs: string[] = [];
  const host = createHost({ home, port: 0, onLog: (level, message) => logs.push(`${level}: ${message}`), ...options.host });
  printLogsIfTheTestFails(logs);
  const asked: PendingApproval[] = [];
  let decision: ApprovalDecision | undefined;
  host.approvals.subscribe((event) => {
    if (event.type !== 'requested') return;
    asked.push(event.approval);
    const answer = decision;
    if (answer) queueMicrotask(() => host.approvals.resolve(event.approval.id, answer));
  });
  let client: Client | undefined;
  const dispose = async () => {
    await client?.close().catch(() => undefined);
    await host.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  };
  try {
    const status = await host.start();
    const url = status.mcp.url!;
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    client = new Client({ name: options.clientName ?? 'security-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const connected = client;
    return {
      host,
      home,
      url,
      client: connected,
      logs,
      asked,
      answerWith(next) {
        decision = next;
      },
      async call(name, args) {
        const result = (await connected.callTool({ name, arguments: args })) as {
          isError?: boolean;
          content?: { type: string; text?: string }[];
          structuredContent?: Record<string, unknown>;
        };
        const text = (result.content ?? []).map((part) => part.text ?? '').join('\n');
        return { isError: result.isError === true, text, structured: result.structuredContent };
      },
      [Symbol.asyncDispose]: dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}
