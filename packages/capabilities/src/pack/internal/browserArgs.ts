import { z } from 'zod';
import { CapabilityError } from '../../errors.js';

/** Longest URL the browser commands take. */
export const MAX_BROWSER_URL_CHARS = 8192;
/** Most characters a snapshot or page text returns (OpenClaw's AI snapshot default). */
export const MAX_BROWSER_TEXT_CHARS = 80_000;
/** Longest text `browser.act` types in one call. */
export const MAX_BROWSER_TYPE_CHARS = 100_000;

/**
 * Checks a URL the dedicated browser may open: absolute `http:`/`https:`, or exactly `about:blank`.
 * Everything else (`file:`, `javascript:`, `data:`, `chrome:`, relative paths) fails `invalid_arguments`.
 */
export function checkBrowserUrl(raw: string): string {
  const value = raw.trim();
  if (value === 'about:blank') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CapabilityError('invalid_arguments', 'url must be an absolute http(s) URL or about:blank.', { data: { reason: 'invalid_url' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CapabilityError('invalid_arguments', `The browser opens http(s) URLs and about:blank only, not ${url.protocol} URLs.`, { data: { reason: 'url_scheme', scheme: url.protocol } });
  }
  return url.href;
}

/** A tab id as the browser commands hand them out (`t1`, `t2`, …). */
export const tabIdSchema = z.string().min(1).max(64).describe('Tab id from browser.tabs or browser.open.');

/** An element ref from the latest `browser.snapshot` of the tab (`e12`, `f1e3`). */
export const refSchema = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9]+$/, 'ref is a snapshot ref such as e12')
  .describe('Element ref from the latest browser.snapshot of the tab, e.g. e12.');

export const urlSchema = z.string().min(1).max(MAX_BROWSER_URL_CHARS);

/** Every ref a snapshot names (`[ref=e12]`). */
export function refsOf(snapshot: string): Set<string> {
  return new Set([...snapshot.matchAll(/\[ref=([A-Za-z0-9]+)\]/g)].map((match) => match[1]!));
}

/** The first `max` UTF-16 code units of `text` (an exact prefix, no split surrogate pair), and whether it was cut. */
export function cutText(text: string, max: number): { readonly text: string; readonly truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}

/** What `browser.act` does, by ref. */
export const actSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('click'),
    ref: refSchema,
    button: z.enum(['left', 'right', 'middle']).optional(),
    doubleClick: z.boolean().optional(),
  }),
  z.strictObject({
    kind: z.literal('type'),
    ref: refSchema,
    text: z.string().max(MAX_BROWSER_TYPE_CHARS),
    submit: z.boolean().optional().describe('Press Enter afterwards.'),
    slowly: z.boolean().optional().describe('Type key by key instead of filling the field at once.'),
  }),
  z.strictObject({
    kind: z.literal('select'),
    ref: refSchema,
    values: z.array(z.string().max(1024)).min(1).max(64),
  }),
  z.strictObject({
    kind: z.literal('press'),
    key: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\x21-\x7e]+$/, 'key is a key name such as Enter or Control+A'),
    ref: refSchema.optional(),
  }),
  z.strictObject({ kind: z.literal('hover'), ref: refSchema }),
]).describe('One action: {kind:"click", ref, button?, doubleClick?} | {kind:"type", ref, text, submit?, slowly?} | {kind:"select", ref, values} | {kind:"press", key, ref?} | {kind:"hover", ref}.');

export type BrowserAction = z.output<typeof actSchema>;
