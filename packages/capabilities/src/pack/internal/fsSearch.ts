import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { isTimeoutError, waitFor } from '@capnode/toolkit';
import { CapabilityError } from '../../errors.js';
import { createGlobMatcher } from './glob.js';
import { createFileSearcher, createIgnoreRules, runSearchJob, searchWorkerMain, type SearchJob, type SearchReport } from './fsSearchWorker.js';

export type { SearchJob, SearchMatch, SearchReport } from './fsSearchWorker.js';

/** The worker's program: the walker and the glob matcher, as source text (see {@link searchWorkerMain}). */
let workerSource: string | undefined;
function sourceOfWorker(): string {
  // Each function is passed as an expression: a bundler may rename the declarations, never their bodies' references.
  workerSource ??= `(${searchWorkerMain.toString()})(require, (${createGlobMatcher.toString()}), (${createIgnoreRules.toString()}), (${createFileSearcher.toString()}), (${runSearchJob.toString()}));`;
  return workerSource;
}

/** True when `pattern` has no regular-expression syntax, so it can be searched for as bytes. */
export function isLiteralPattern(pattern: string): boolean {
  return !/[.*+?^${}()|[\]\\]/.test(pattern);
}

/** Refuses a pattern that is no valid regular expression, with the engine's reason. */
export function checkPattern(pattern: string, ignoreCase: boolean): void {
  try {
    new RegExp(pattern, ignoreCase ? 'gim' : 'gm');
  } catch (error) {
    throw new CapabilityError('invalid_arguments', `\`pattern\` is not a valid regular expression: ${(error as Error).message}`, { data: { reason: 'invalid_pattern' } });
  }
}

/** Files a worker claims at a time: small enough to balance, large enough that claiming costs nothing. */
export const SEARCH_CHUNK_FILES = 32;

/** Workers one search uses: one per core, at most 4 (IO-bound past that). */
export function searchShards(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** How long an idle search worker is kept for the next search. */
export const SEARCH_WORKER_IDLE_MS = 30_000;
/** Most idle search workers kept. */
const MAX_IDLE_WORKERS = 4;

const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];

/** An idle worker, or a new one; it keeps the process alive only while it searches. */
function takeWorker(): Worker {
  const kept = idle.pop();
  if (kept) {
    clearTimeout(kept.timer);
    kept.worker.ref();
    return kept.worker;
  }
  const worker = new Worker(sourceOfWorker(), { eval: true, stdout: true, stderr: true, resourceLimits: { maxOldGenerationSizeMb: 512 } });
  worker.on('error', () => undefined);
  return worker;
}

/** Keeps a worker that finished its job for the next search, for a while; ends it when too many are idle. */
function keepWorker(worker: Worker): void {
  if (idle.length >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  worker.unref();
  const entry = {
    worker,
    timer: setTimeout(() => {
      idle.splice(idle.indexOf(entry), 1);
      void worker.terminate();
    }, SEARCH_WORKER_IDLE_MS).unref(),
  };
  idle.push(entry);
}

/** Runs one shard of a search on a (warm) worker; a worker whose search is abandoned is terminated, never reused. */
function runShard(job: SearchJob, signal: AbortSignal): Promise<SearchReport> {
  const worker = takeWorker();
  let settled = false;
  const stop = () => {
    if (!settled) void worker.terminate();
  };
  signal.addEventListener('abort', stop, { once: true });
  return new Promise<SearchReport>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`search worker exited with ${code}`));
    const onError = (error: Error) => reject(error);
    worker.once('exit', onExit);
    worker.once('error', onError);
    worker.once('message', (report: SearchReport) => {
      settled = true;
      worker.off('exit', onExit);
      worker.off('error', onError);
      keepWorker(worker);
      resolve(report);
    });
    worker.postMessage(job);
  }).finally(() => {
    signal.removeEventListener('abort', stop);
    if (!settled) void worker.terminate();
  });
}

/** The shards' reports as one: matches in walk order, cut to `maxMatches`. */
export function mergeReports(reports: readonly SearchReport[], maxMatches: number): SearchReport {
  const all = reports.flatMap((report) => report.matches).sort((a, b) => (a.key ?? 0) - (b.key ?? 0));
  return {
    matches: all.slice(0, maxMatches).map(({ key: _key, ...match }) => match),
    filesSearched: reports.reduce((sum, report) => sum + report.filesSearched, 0),
    filesSkipped: reports.reduce((sum, report) => sum + report.filesSkipped, 0),
    truncated: all.length > maxMatches || reports.some((report) => report.truncated),
  };
}

/**
 * Runs one search in worker threads (one per core, each searching the chunks of files it claims)
 * under a deadline. The host's own thread never runs the caller's regular expression, so a pattern
 * that backtracks for ever costs those workers their lives at the deadline (or when `signal`
 * aborts), never the host's responsiveness.
 */
export async function runSearch(job: Omit<SearchJob, 'claims' | 'chunkFiles'>, options: { readonly timeoutMs: number; readonly signal?: AbortSignal; readonly shards?: number; readonly chunkFiles?: number }): Promise<SearchReport> {
  const shards = options.shards ?? searchShards();
  const claims = new SharedArrayBuffer(8);
  new Int32Array(claims)[1] = 0x7fffffff;
  const shared: SearchJob = { ...job, claims, chunkFiles: options.chunkFiles ?? SEARCH_CHUNK_FILES };
  try {
    const reports = await waitFor(
      (signal) => Promise.all(Array.from({ length: shards }, () => runShard(shared, signal))),
      { timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
    );
    return mergeReports(reports, job.maxMatches);
  } catch (error) {
    if (isTimeoutError(error)) {
      throw new CapabilityError('timeout', `The search did not finish within ${options.timeoutMs} ms and was stopped; narrow it (a smaller directory, \`include\` globs, a simpler pattern).`, {
        data: { reason: 'search_timeout', timeoutMs: options.timeoutMs },
      });
    }
    if (options.signal?.aborted) throw new CapabilityError('cancelled', 'The search was cancelled.');
    throw new CapabilityError('failed', 'The search failed.', { cause: error });
  }
}
