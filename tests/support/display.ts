import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** A private X display (Xvfb) for tests that need one (clipboard, screen). */
export interface TestDisplay extends AsyncDisposable {
  /** `:<n>`, for `DISPLAY`. */
  readonly display: string;
}

/**
 * Starts Xvfb on a free display number (it picks one and reports it through `-displayfd`), listening
 * on no TCP port. Disposing stops it; clients of the display (e.g. a forked xclip) then exit too.
 */
export async function startTestDisplay(options: { readonly size?: string } = {}): Promise<TestDisplay> {
  const child = spawn('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', `${options.size ?? '640x480'}x24`], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const number = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`Xvfb did not report a display within 10 s: ${stderr.slice(0, 500)}`)), 10_000);
    const fd = child.stdio[3] as NodeJS.ReadableStream;
    fd.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(text.trim());
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb exited (${code}): ${stderr.slice(0, 500)}`));
    });
  });
  return {
    display: `:${number}`,
    async [Symbol.asyncDispose]() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
