import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PollOptions } from '../support/poll.js';
import { completion, type ProcessResult } from '../support/process.js';

export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The built CLI; `pnpm test` builds it first (or: pnpm turbo run build --filter capnode...). */
export const cliPath = join(repoRoot, 'apps/cli/dist/bin.js');

if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing; build first: pnpm turbo run build --filter capnode...`);

/** How a CLI run ended, and all it wrote. */
export type CliResult = ProcessResult;
export { completion };

/** A temporary CAPNODE_HOME, removed on dispose. */
export function tempHome(): { readonly home: string; [Symbol.dispose](): void } {
  const home = mkdtempSync(join(tmpdir(), 'capnode-cli-'));
  return { home, [Symbol.dispose]: () => rmSync(home, { recursive: true, force: true }) };
}

function childEnv(home: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.CAPNODE_URL;
  delete base.CAPNODE_TOKEN;
  return { ...base, CAPNODE_HOME: home, ...env };
}

/** Spawns `node apps/cli/dist/bin.js ...args` with `CAPNODE_HOME=home`. */
export function spawnCli(args: readonly string[], home: string, env?: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [cliPath, ...args], { env: childEnv(home, env), stdio: 'pipe' });
}

/** Runs the CLI to completion. */
export function runCli(args: readonly string[], home: string, env?: Record<string, string>): Promise<CliResult> {
  const child = spawnCli(args, home, env);
  child.stdin.end();
  return completion(child);
}

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  [Symbol.asyncDispose](): Promise<void>;
}

const READY = /capnode ready: MCP on (\S+) \(token: (.+)\)/;

/** Starts `capnode serve --port 0` and waits for its ready line. */
export async function startServe(home: string, args: readonly string[] = ['--port', '0'], timeoutMs = 20_000): Promise<ServeProcess> {
  const child = spawnCli(['serve', ...args], home);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolvePromise) => child.on('close', (code) => resolvePromise(code)));
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not get ready in ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`)), timeoutMs);
    const check = () => {
      const match = READY.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match[1]!);
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before ready\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  let stopped: Promise<number | null> | undefined;
  const serve: ServeProcess = {
    url,
    child,
    stdout: () => out,
    stderr: () => err,
    waitForStderr(pattern, waitMs = 20_000) {
      return new Promise((resolvePromise, reject) => {
        const deadline = setTimeout(() => {
          child.stderr.off('data', check);
          reject(new Error(`stderr never matched ${pattern}: ${err}`));
        }, waitMs);
        const check = () => {
          const match = pattern.exec(err);
          if (match) {
            clearTimeout(deadline);
            child.stderr.off('data', check);
            resolvePromise(match);
          }
        };
        child.stderr.on('data', check);
        check();
      });
    },
    stop(signal = 'SIGTERM') {
      if (!stopped) {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        stopped = exited;
      }
      return stopped;
    },
    async [Symbol.asyncDispose]() {
      await serve.stop();
    },
  };
  return serve;
}

/** Poll options for checks that run a CLI process or query a host: 100 ms apart, 20 s by default. */
export function slowPoll(what: string, timeoutMs = 20_000): PollOptions {
  return { what, timeoutMs, intervalMs: 100 };
}

