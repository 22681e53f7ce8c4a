import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseMcpConfig, type Logger, type McpConfig } from '@capnode/mcp-client';

const here = dirname(fileURLToPath(import.meta.url));
const requireFromPackage = createRequire(join(here, '../../packages/mcp-client/package.json'));

export const FIXTURE = join(here, 'fixtures/stdioServer.mjs');

/** Path of a real server's entry script from npm (run with `node`, not npx, to keep tests fast). */
export function realServer(name: 'server-everything' | 'server-filesystem' | 'server-memory'): string {
  return join(dirname(requireFromPackage.resolve(`@modelcontextprotocol/${name}/package.json`)), 'dist/index.js');
}

/** The secret the content fixture is given (and leaks); results must never show it. */
export const CONTENT_SECRET = 'sk-live-0123456789abcdefSECRET';

/** A server entry running the content fixture (oversized schemas and results, leaked secrets, progress bursts). */
export function contentServer(name = 'cx', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, command: process.execPath, args: [join(here, 'fixtures/contentServer.mjs')], env: { SECRET_TOKEN: CONTENT_SECRET }, ...extra };
}

/** A server entry running the misbehaving fixture in `mode`. */
export function fixtureServer(name: string, mode = 'ok', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, command: process.execPath, args: [FIXTURE, mode], ...extra };
}

/** A config granting every listed server to agent `test`, with full autonomy unless a profile is given. */
export function grantAll(servers: Record<string, unknown>[], profile: Record<string, unknown> = { autonomy: 'full' }, extra: Record<string, unknown> = {}): McpConfig {
  return parseMcpConfig({
    servers,
    bundles: { all: { servers: servers.map((s) => s.name) } },
    agents: { test: { mcp_bundles: ['all'] } },
    risk_profiles: { test: profile },
    ...extra,
  }).config;
}

export interface MemoryLogger extends Logger {
  readonly lines: string[];
  text(): string;
}

/** A logger that keeps every line (tests assert on what was, and was not, logged). */
export function memoryLogger(): MemoryLogger {
  const lines: string[] = [];
  const push = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error'), text: () => lines.join('\n') };
}

/** Lines a fixture appended to its FIXTURE_LOG file. */
export function readLog(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** The text of a model result, joined. */
export function textOf(result: { content: readonly { text: string }[] }): string {
  return result.content.map((item) => item.text).join('\n');
}

/** Handles the test process holds now (timers, sockets, child processes), minus the terminal. */
export function activeHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
}

/**
 * Resolves once the process holds no more handles than `baseline` (from {@link activeHandles} before
 * the scenario): nothing the runtime started keeps the process alive after `close()`.
 */
export async function expectNoHandlesLeft(baseline: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (activeHandles() > baseline) {
    if (Date.now() > deadline) throw new Error(`handles left after close: ${process.getActiveResourcesInfo().join(', ')} (baseline ${baseline})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The outcome of {@link runScenario}. */
export interface ScenarioResult {
  /** False when the child was still running at the deadline and had to be killed. */
  readonly exitedByItself: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The last stdout line, parsed as JSON (the scenario's report), if any. */
  readonly report: unknown;
}

/**
 * Runs `source` (an ES module) in a fresh `node` process that never calls `process.exit`, and
 * reports whether it exited by itself within `timeoutMs`: proof that nothing the runtime started
 * (process, socket, timer) outlived `close()`. The module gets `MCP_CLIENT` and `MCP_CLIENT_NODE`
 * (built entry points of `@capnode/mcp-client`, as file URLs) and `FIXTURE` in its environment.
 */
export async function runScenario(source: string, options: { readonly timeoutMs?: number; readonly execArgv?: readonly string[] } = {}): Promise<ScenarioResult> {
  const { spawn } = await import('node:child_process');
  const { writeFileSync } = await import('node:fs');
  const { pathToFileURL } = await import('node:url');
  const dir = mkdtempSync(join(tmpdir(), 'capnode-scenario-'));
  const file = join(dir, 'scenario.mjs');
  writeFileSync(file, source);
  const dist = join(here, '../../packages/mcp-client/dist');
  const child = spawn(process.execPath, [...(options.execArgv ?? []), file], {
    env: { ...process.env, MCP_CLIENT: pathToFileURL(join(dist, 'index.js')).href, MCP_CLIENT_NODE: pathToFileURL(join(dist, 'node.js')).href, FIXTURE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exitedByItself = true;
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      exitedByItself = false;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  rmSync(dir, { recursive: true, force: true });
  const last = stdout.trim().split('\n').pop() ?? '';
  let report: unknown;
  try {
    report = JSON.parse(last);
  } catch {
    report = undefined;
  }
  return { exitedByItself, code, stdout, stderr, report };
}
