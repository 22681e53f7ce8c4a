import type { IncomingMessage } from 'node:http';

export type BodyRead = { readonly kind: 'ok'; readonly text: string } | { readonly kind: 'too-large' } | { readonly kind: 'aborted' };

/**
 * Reads a request body as UTF-8, stopping as soon as more than `maxBytes` arrived. The caller
 * checks Content-Length first and bounds the wait with its own deadline.
 */
export function readBody(incoming: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  if (incoming.readableEnded) return Promise.resolve({ kind: 'ok', text: '' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onAbort);
      incoming.off('close', onAbort);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        incoming.pause();
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      const buffer = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      resolve({ kind: 'ok', text: buffer.toString('utf8') });
    };
    const onAbort = (): void => {
      cleanup();
      resolve({ kind: 'aborted' });
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onAbort);
    incoming.on('close', onAbort);
  });
}
