import { isPlainObject } from '@capnode/toolkit';
/**
 * Depth and size limits on everything an MCP server sends that reaches a model or the host's own
 * clients. Every function here walks untrusted values iteratively (an explicit stack, never
 * recursion), stops as soon as a limit is passed, and degrades with a `[capnode: …]` marker instead
 * of throwing, so a 5,000-deep or 2 MiB value cannot make a later `JSON.stringify` fail.
 */

/** A depth and size bound for one JSON value; size counts serialized JSON characters. */
export interface JsonLimit {
  readonly maxDepth: number;
  readonly maxChars: number;
}

/** The documented limits (see the package README, "Content limits"). */
export const CONTENT_LIMITS = {
  /** A tool's `inputSchema`; over it the schema becomes `{ type: 'object' }` and the description says so. */
  inputSchema: { maxDepth: 32, maxChars: 256 * 1024 },
  /** A tool's `annotations`; over it they are dropped. */
  toolAnnotations: { maxDepth: 4, maxChars: 4 * 1024 },
  /** A result's `structuredContent`; over it it is omitted and a marker text item is added. */
  structuredContent: { maxDepth: 32, maxChars: 1024 * 1024 },
  /** `annotations` of one content item; over it they are replaced by a marker in `_meta`. */
  contentAnnotations: { maxDepth: 8, maxChars: 8 * 1024 },
  /** `_meta` of one content item; over it it is replaced by a marker. */
  contentMeta: { maxDepth: 16, maxChars: 16 * 1024 },
  /** Every other field of one content item (names, URIs, titles; not text or binary data); over it the item becomes a marker. */
  contentFields: { maxDepth: 8, maxChars: 16 * 1024 },
  /** Characters of text across all items of one tool result (text items and embedded resource text). */
  toolText: 256_000,
  /** Characters of one resource read or rendered prompt, after secret scrubbing (see `MAX_CONTEXT_TEXT`). */
  contextText: 32_000,
  /** A listed tool's description. */
  toolDescription: 4_096,
} as const;

/** The `_meta` key under which a degraded item says what was removed. */
export const DROPPED_META_KEY = 'capnode/dropped';

export type JsonCheck = { readonly ok: true; readonly chars: number } | { readonly ok: false; readonly reason: string };

function describeChars(chars: number): string {
  return chars >= 1024 * 1024 ? `${(chars / (1024 * 1024)).toFixed(0)} MiB` : chars >= 1024 ? `${Math.round(chars / 1024)} KiB` : `${chars} characters`;
}

/**
 * Checks a JSON value against a limit without recursion: depth (a scalar at the top is depth 0, each
 * object or array adds one) and serialized size (approximate: escapes are not counted). Stops at the
 * first limit passed, so a cycle fails as too deep. Functions, symbols and bigints fail.
 */
export function checkJson(value: unknown, limit: JsonLimit): JsonCheck {
  const tooLarge = { ok: false, reason: `larger than ${describeChars(limit.maxChars)}` } as const;
  const tooDeep = { ok: false, reason: `nested deeper than ${limit.maxDepth} levels` } as const;
  let chars = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    switch (typeof current) {
      case 'string':
        chars += current.length + 2;
        break;
      case 'number':
      case 'boolean':
        chars += 5;
        break;
      case 'undefined':
        break;
      case 'object': {
        if (current === null) {
          chars += 4;
          break;
        }
        if (depth + 1 > limit.maxDepth) return tooDeep;
        if (Array.isArray(current)) {
          chars += 2 + current.length;
          if (chars > limit.maxChars) return tooLarge;
          for (let i = current.length - 1; i >= 0; i -= 1) stack.push({ value: current[i], depth: depth + 1 });
        } else {
          chars += 2;
          for (const key of Object.keys(current)) {
            chars += key.length + 4;
            stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1 });
            if (chars > limit.maxChars) return tooLarge;
          }
        }
        break;
      }
      default:
        return { ok: false, reason: `not serializable (${typeof current})` };
    }
    if (chars > limit.maxChars) return tooLarge;
  }
  return { ok: true, chars };
}

/** The marker that ends truncated text. */
export function truncationMarker(omitted: number): string {
  return `[capnode: truncated ${omitted} more characters]`;
}

/** Cuts text to `max` characters plus a `[capnode: truncated N more characters]` line; never splits a surrogate pair. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max);
  const code = text.charCodeAt(cut - 1);
  if (cut > 0 && code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return cut === 0 ? truncationMarker(text.length) : `${text.slice(0, cut)}\n${truncationMarker(text.length - cut)}`;
}

/** What a listed tool's schema became. */
export interface BoundedSchema {
  readonly schema: Record<string, unknown>;
  /** Set when the schema was replaced; append it to the description. */
  readonly note?: string;
}

/**
 * Bounds a tool's `inputSchema` ({@link CONTENT_LIMITS}`.inputSchema`): over the limit it is replaced
 * by `{ type: 'object' }` and `note` says why, for the description, so a model still sees the tool and
 * a client never gets a schema it cannot serialize.
 */
export function boundInputSchema(schema: Record<string, unknown>, limit: JsonLimit = CONTENT_LIMITS.inputSchema): BoundedSchema {
  const check = checkJson(schema, limit);
  if (check.ok) return { schema };
  return { schema: { type: 'object' }, note: `[capnode: inputSchema replaced by {"type":"object"}: the server's schema is ${check.reason}]` };
}

/** A listed tool's model-facing fields after {@link boundInputSchema} and the annotation limit. */
export interface BoundedListedTool {
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?: Record<string, unknown>;
  /** What was changed, for the server's diagnostic warnings. */
  readonly degraded?: string;
}

/**
 * Bounds what `tools/list` said about one tool: the schema (replaced with a note appended to the
 * description when over {@link CONTENT_LIMITS}`.inputSchema`) and the annotations (dropped when over
 * `toolAnnotations`). `description` should already be capped.
 */
export function boundListedTool(description: string, inputSchema: Record<string, unknown>, annotations: Record<string, unknown> | undefined): BoundedListedTool {
  const bounded = boundInputSchema(inputSchema);
  const hints = annotations === undefined ? undefined : boundJson(annotations, CONTENT_LIMITS.toolAnnotations);
  const degraded = [bounded.note ? 'inputSchema replaced by {"type":"object"} (over the content limits)' : '', hints?.reason ? `annotations dropped (${hints.reason})` : ''].filter(Boolean).join('; ');
  return {
    description: bounded.note ? `${description}${description ? '\n\n' : ''}${bounded.note}` : description,
    inputSchema: bounded.schema,
    ...(hints?.value ? { annotations: hints.value } : {}),
    ...(degraded ? { degraded } : {}),
  };
}

/** A JSON value kept when within `limit`, otherwise `undefined` with the reason. */
export function boundJson<T>(value: T, limit: JsonLimit): { readonly value: T | undefined; readonly reason?: string } {
  const check = checkJson(value, limit);
  return check.ok ? { value } : { value: undefined, reason: check.reason };
}

type Item = Record<string, unknown>;

/** Fields of a content item bounded separately from {@link CONTENT_LIMITS}`.contentFields`. */
const OWN_BUDGET = new Set(['type', 'text', 'data', 'annotations', '_meta', 'resource']);

/** Bounds `annotations` and `_meta` of one object in place (a copy is returned when anything changes). */
function boundExtras(item: Item): Item {
  let out = item;
  const dropped: string[] = [];
  if (item.annotations !== undefined) {
    const check = checkJson(item.annotations, CONTENT_LIMITS.contentAnnotations);
    if (!check.ok) {
      out = { ...out };
      delete out.annotations;
      dropped.push(`annotations ${check.reason}`);
    }
  }
  if (item._meta !== undefined) {
    const check = checkJson(item._meta, CONTENT_LIMITS.contentMeta);
    if (!check.ok) {
      out = { ...out, _meta: {} };
      dropped.push(`_meta ${check.reason}`);
    }
  }
  if (dropped.length === 0) return out;
  return { ...out, _meta: { ...(isPlainObject(out._meta) ? out._meta : {}), [DROPPED_META_KEY]: `removed by capnode: ${dropped.join('; ')}` } };
}

/** Checks every field of an item that has no budget of its own (names, URIs, titles). */
function otherFieldsCheck(item: Item, skip: ReadonlySet<string>): JsonCheck {
  const rest: Item = {};
  for (const key of Object.keys(item)) if (!skip.has(key)) rest[key] = item[key];
  return checkJson(rest, CONTENT_LIMITS.contentFields);
}

/** What {@link boundToolContent} returns. */
export interface BoundedContent {
  readonly content: unknown[];
  readonly structuredContent?: Record<string, unknown>;
}

/**
 * Bounds a `tools/call` result's content and structured content ({@link CONTENT_LIMITS}): text is
 * cut at `toolText` characters across all items, `annotations` and `_meta` over their limits are
 * replaced by a `capnode/dropped` marker, an item whose other fields are too large or deep becomes a
 * marker text item, and `structuredContent` over its limit is omitted with a marker text item.
 * Binary data (`data`, `blob`) is left to the binary rules. Returns the input arrays when nothing changed.
 */
export function boundToolContent(content: readonly unknown[], structuredContent: unknown, textBudget: number = CONTENT_LIMITS.toolText): BoundedContent {
  let budget = textBudget;
  let changed = false;
  const out: unknown[] = new Array(content.length);
  const take = (text: string): string => {
    const cut = truncateText(text, Math.max(0, budget));
    budget -= Math.min(text.length, Math.max(0, budget));
    return cut;
  };
  for (let index = 0; index < content.length; index += 1) {
    const raw = content[index];
    if (!isPlainObject(raw)) {
      out[index] = raw;
      continue;
    }
    const fields = otherFieldsCheck(raw, OWN_BUDGET);
    if (!fields.ok) {
      out[index] = { type: 'text', text: `[capnode: content item omitted: its fields are ${fields.reason}]` };
      changed = true;
      continue;
    }
    let item = boundExtras(raw);
    if (typeof item.text === 'string') {
      const text = take(item.text);
      if (text !== item.text) item = { ...item, text };
    }
    if (item.resource !== undefined) {
      const resource = isPlainObject(item.resource) ? item.resource : undefined;
      const resourceFields = resource ? otherFieldsCheck(resource, new Set(['text', 'blob', '_meta'])) : { ok: false as const, reason: 'not an object' };
      if (!resource || !resourceFields.ok) {
        out[index] = { type: 'text', text: `[capnode: embedded resource omitted: ${resourceFields.ok ? 'not an object' : resourceFields.reason}]` };
        changed = true;
        continue;
      }
      let bounded = boundExtras(resource);
      if (typeof bounded.text === 'string') {
        const text = take(bounded.text);
        if (text !== bounded.text) bounded = { ...bounded, text };
      }
      if (bounded !== resource) item = { ...item, resource: bounded };
    }
    if (item !== raw) changed = true;
    out[index] = item;
  }
  let structured = isPlainObject(structuredContent) ? structuredContent : undefined;
  if (structured !== undefined) {
    const check = checkJson(structured, CONTENT_LIMITS.structuredContent);
    if (!check.ok) {
      structured = undefined;
      out.push({ type: 'text', text: `[capnode: structuredContent omitted: ${check.reason}]` });
      changed = true;
    }
  }
  return { content: changed ? out : (content as unknown[]), ...(structured === undefined ? {} : { structuredContent: structured }) };
}

/** JSON text of a value that may be arbitrarily deep or large: never throws, bounded by `limit`. */
export function safeJson(value: unknown, limit: JsonLimit): string {
  const check = checkJson(value, limit);
  if (!check.ok) return `[capnode: value omitted: ${check.reason}]`;
  return JSON.stringify(value) ?? 'null';
}
