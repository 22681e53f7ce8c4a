/** One item of a command's output; the shapes match MCP content blocks so transports pass them through. */
export type Content =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | {
      type: 'resource';
      resource: { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string };
    };

/** A successful command result: content for every transport, plus optional structured data. */
export interface CommandSuccess {
  readonly ok: true;
  readonly content: readonly Content[];
  /** JSON object form of the result (MCP `structuredContent`, gateway payload). */
  readonly structured?: Record<string, unknown>;
}

/** A typed command failure: an expected outcome, reported to the caller as a tool error. */
export interface CommandFailure {
  readonly ok: false;
  readonly error: { readonly code: import('./errors.js').CapabilityErrorCode; readonly message: string; readonly data?: Record<string, unknown> };
}

export type CommandResult = CommandSuccess | CommandFailure;

/** What `execute` may return: a full result, a plain string (text), or content items. */
export type CommandOutput = CommandResult | string | Content | readonly Content[];

/** A text result. */
export function text(value: string): CommandSuccess {
  return { ok: true, content: [{ type: 'text', text: value }] };
}

/** A JSON result: pretty text for readers and the object as structured data. */
export function json(value: Record<string, unknown>): CommandSuccess {
  return { ok: true, content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structured: value };
}

/** An image result from base64 data. */
export function image(data: string, mimeType: string): CommandSuccess {
  return { ok: true, content: [{ type: 'image', data, mimeType }] };
}

/** An audio result from base64 data. */
export function audio(data: string, mimeType: string): CommandSuccess {
  return { ok: true, content: [{ type: 'audio', data, mimeType }] };
}

/** An embedded resource result (text or base64 blob). */
export function resource(value: Extract<Content, { type: 'resource' }>['resource']): CommandSuccess {
  return { ok: true, content: [{ type: 'resource', resource: value }] };
}

/** A typed failure, shown to the caller as a tool error with `message`. */
export function fail(code: CommandFailure['error']['code'], message: string, data?: Record<string, unknown>): CommandFailure {
  return { ok: false, error: data === undefined ? { code, message } : { code, message, data } };
}

/** Normalizes whatever `execute` returned into a {@link CommandResult}. */
export function toCommandResult(output: CommandOutput): CommandResult {
  if (typeof output === 'string') return text(output);
  if (Array.isArray(output)) return { ok: true, content: output as readonly Content[] };
  if ('ok' in (output as object)) return output as CommandResult;
  return { ok: true, content: [output as Content] };
}
