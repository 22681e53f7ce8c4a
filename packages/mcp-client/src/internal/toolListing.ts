import type { InputJsonSchema } from '@capnode/capabilities';
import { SdkError, SdkErrorCode, type Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { isPlainObject } from '@capnode/toolkit';
import { capText } from '../redact.js';
import { boundListedTool, CONTENT_LIMITS } from './contentLimits.js';

// Reading one server's `tools/list`: pages, validation, duplicates. No state; the session decides
// what a failure means for its catalog.

const MAX_LIST_PAGES = 100;
const MAX_DESCRIPTION = CONTENT_LIMITS.toolDescription;

const listPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** One tool as a server listed it, validated. */
export interface ListedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: InputJsonSchema;
  readonly annotations?: Record<string, unknown>;
  /** What the content limits changed, for the server's diagnostic warnings. */
  readonly degraded?: string;
}

/** Validates one listed tool; returns a reason when it must be skipped. */
function readTool(raw: unknown): ListedTool | string {
  if (!isPlainObject(raw)) return 'not an object';
  const { name, description, inputSchema, annotations } = raw;
  if (typeof name !== 'string' || name.length === 0) return 'missing name';
  if (name.length > 256) return `name longer than 256 characters`;
  if (!isPlainObject(inputSchema) || inputSchema.type !== 'object') return `'${capText(name, 80)}' has no object inputSchema`;
  const text = capText(typeof description === 'string' ? description : '', MAX_DESCRIPTION);
  return { name, ...boundListedTool(text, inputSchema, isPlainObject(annotations) ? annotations : undefined) } as ListedTool;
}

/** What one listing found. `error` is set when a page failed; `pages` tells which. */
export interface ToolListing {
  readonly tools: ListedTool[];
  readonly warnings: string[];
  readonly pages: number;
  readonly error?: unknown;
}

/**
 * Lists every page of a server's tools within `timeoutMs` for the whole listing and until `signal`
 * aborts. The deadline is the SDK's own per-request timer, given what is left of it on each page: no
 * timer or controller of our own per listing. A page that times out fails with the SDK's
 * `RequestTimeout` (see {@link isListTimeout}).
 */
export async function listServerTools(client: Client, signal: AbortSignal, timeoutMs: number): Promise<ToolListing> {
  const endsAt = performance.now() + timeoutMs;
  const warnings: string[] = [];
  const tools: ListedTool[] = [];
  const seen = new Set<string>();
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  try {
    do {
      pages += 1;
      if (pages > MAX_LIST_PAGES) {
        warnings.push(`tool listing stopped after ${MAX_LIST_PAGES} pages`);
        break;
      }
      const left = Math.ceil(endsAt - performance.now());
      if (left <= 0) throw new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs });
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, listPageSchema, { signal, timeout: left });
      page.tools.forEach((raw, index) => {
        const tool = readTool(raw);
        if (typeof tool === 'string') warnings.push(`tool #${tools.length + index + 1} skipped: ${tool}`);
        else if (seen.has(tool.name)) warnings.push(`duplicate tool '${capText(tool.name, 80)}' skipped`);
        else {
          seen.add(tool.name);
          tools.push(tool);
          if (tool.degraded) warnings.push(`tool '${capText(tool.name, 80)}': ${tool.degraded}`);
        }
      });
      cursor = page.nextCursor;
      if (cursor !== undefined && cursors.has(cursor)) {
        warnings.push('tool listing stopped: the server repeated a page cursor');
        break;
      }
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
  } catch (error) {
    return { tools, warnings, pages, error };
  }
  return { tools, warnings, pages };
}

/** True for the failure of a listing that ran out of time (the SDK's request timeout). */
export function isListTimeout(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
}
