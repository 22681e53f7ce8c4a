import type { CommandResult, Content } from '@capnode/capabilities';
import type { StandardSchemaV1 } from '@modelcontextprotocol/client';
import { isPlainObject } from '@capnode/toolkit';
import { capText } from '../redact.js';
import { boundToolContent } from './contentLimits.js';

// Result shaping: what a server's `tools/call` answer becomes inside the invocation pipeline, and
// how its annotations are read. The model-facing shaping (binary items, limits) is `results.ts`.

/** What the runtime reads from a `tools/call` result; other fields pass through untouched. */
export interface CallResult {
  readonly content?: unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly [extra: string]: unknown;
}

function describeType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/**
 * The shape check for `tools/call` results, as a hand-written Standard Schema: it runs on every call,
 * and a zod object parse (which also copies the result) costs several times more for the same check.
 */
export const callResultSchema: StandardSchemaV1<unknown, CallResult> = {
  '~standard': {
    version: 1,
    vendor: 'capnode',
    validate(value) {
      if (!isPlainObject(value)) return { issues: [{ message: `Invalid input: expected object, received ${describeType(value)}` }] };
      if (value.content !== undefined && !Array.isArray(value.content)) return { issues: [{ message: `Invalid input: expected array, received ${describeType(value.content)}`, path: ['content'] }] };
      if (value.isError !== undefined && typeof value.isError !== 'boolean') return { issues: [{ message: `Invalid input: expected boolean, received ${describeType(value.isError)}`, path: ['isError'] }] };
      return { value: value as CallResult };
    },
  },
};

/** A `tools/call` result as a pipeline result: tool errors become scrubbed, capped failures. */
export function toCommandResult(result: CallResult, scrub: (text: string) => string): CommandResult {
  const bounded = boundToolContent(result.content ?? [], result.structuredContent);
  const content = bounded.content as Content[];
  if (result.isError) {
    const texts = content.filter((item) => isPlainObject(item) && item.type === 'text' && typeof item.text === 'string').map((item) => (item as { text: string }).text);
    const omitted = content.length - texts.length;
    const message = `${texts.join('\n') || 'The tool reported an error.'}${omitted > 0 ? ` [${omitted} non-text item(s) omitted]` : ''}`;
    return { ok: false, error: { code: 'failed', message: capText(scrub(message)) } };
  }
  const structured = bounded.structuredContent;
  return { ok: true, content, ...(structured ? { structured } : {}) };
}
