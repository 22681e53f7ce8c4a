import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

/** How a child process ended, and all it wrote. */
export interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Collects a child's stdout and stderr (both piped) until it exits. */
export function completion(child: ChildProcess & { readonly stdout: Readable; readonly stderr: Readable }): Promise<ProcessResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
