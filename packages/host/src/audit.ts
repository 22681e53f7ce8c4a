import { createWriteStream, renameSync, statSync, type WriteStream } from 'node:fs';
import type { InvocationHook } from '@capnode/capabilities';
import { argumentsHashSync } from '@capnode/protocol/node';

/** One line of `audit.log`. Argument values are never written (they can hold secrets); only their hash. */
export interface AuditRecord {
  /** ISO 8601 time the call finished. */
  readonly time: string;
  /** Canonical command name, or the name as sent when it was unknown. */
  readonly command: string;
  readonly transport: string;
  readonly caller?: string;
  readonly requestId?: string;
  /** Hex SHA-256 of the canonical JSON of the arguments as sent. */
  readonly argsSha256?: string;
  /** `ok`, or the failure code (`denied`, `timeout`, `invalid_arguments`, ...). */
  readonly outcome: string;
  readonly durationMs: number;
}

export interface AuditLogOptions {
  readonly path: string;
  /** Size at which the log is moved to `<path>.1` when opened. Default 10 MiB. */
  readonly rotateBytes?: number;
  /** Receives write errors (the log never fails a call). */
  readonly onError?: (error: Error) => void;
}

/** An append-only invocation log and the hook that feeds it. */
export interface AuditLog {
  readonly hook: InvocationHook;
  readonly path: string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function hashArgs(args: unknown): string | undefined {
  try {
    return argumentsHashSync(args ?? {});
  } catch {
    return undefined;
  }
}

/**
 * Opens `audit.log` (mode 0600, appended) and returns an `afterInvoke` hook that writes one JSON
 * line per invocation: command, transport, caller, argument hash, outcome code, duration.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { path } = options;
  const rotateBytes = options.rotateBytes ?? 10 * 1024 * 1024;
  let reported = false;
  const report = (error: Error) => {
    if (reported) return;
    reported = true;
    options.onError?.(error);
  };
  try {
    if (statSync(path).size >= rotateBytes) renameSync(path, `${path}.1`);
  } catch {
    // Missing file, or not rotatable: append to what is there.
  }
  let stream: WriteStream | undefined = createWriteStream(path, { flags: 'a', mode: 0o600 });
  stream.on('error', report);
  let closing: Promise<void> | undefined;

  const hook: InvocationHook = {
    afterInvoke(_invocation, request, outcome) {
      if (!stream) return;
      const record: AuditRecord = {
        time: new Date().toISOString(),
        command: outcome.command ?? request.command,
        transport: request.transport,
        ...(request.caller === undefined ? {} : { caller: request.caller }),
        ...(request.requestId === undefined ? {} : { requestId: request.requestId }),
        ...((hash) => (hash === undefined ? {} : { argsSha256: hash }))(hashArgs(request.args)),
        outcome: outcome.result.ok ? 'ok' : outcome.result.error.code,
        durationMs: Math.round(outcome.durationMs * 1000) / 1000,
      };
      stream.write(`${JSON.stringify(record)}\n`);
    },
  };

  const log: AuditLog = {
    hook,
    path,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const open = stream;
        stream = undefined;
        if (!open) return resolve();
        open.end(() => resolve());
      });
      return closing;
    },
    [Symbol.asyncDispose]: () => log.close(),
  };
  return log;
}
