import { exceedsJsonDepth } from '@capnode/toolkit';
import type { FieldError } from '../../config/settingsPatch.js';

export type { FieldError } from '../../config/settingsPatch.js';

/** Failure codes of the dashboard API (`error.code`). */
export type DashboardErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'csrf'
  | 'origin'
  | 'host'
  | 'not_found'
  | 'method'
  | 'invalid'
  | 'conflict'
  | 'unavailable'
  | 'too_large'
  | 'internal';

/** Every API response is JSON and never cached; no Access-Control-* header is ever sent. */
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...headers } });
}

/** `{ error: { code, message, fields? } }` with `status`. */
export function apiError(status: number, code: DashboardErrorCode, message: string, fields?: readonly FieldError[]): Response {
  return json(status, { error: { code, message, ...(fields ? { fields } : {}) } });
}

/** An HTML page with the dashboard's content security policy (own origin only, no inline script). */
export function html(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      ...SECURITY_HEADERS,
      ...headers,
    },
  });
}

/** Deepest nesting a dashboard body may have (settings are a few levels deep). */
export const MAX_BODY_DEPTH = 32;

/** The JSON object body of `request`, or the 400 / 413 reply (400 also when it nests beyond {@link MAX_BODY_DEPTH}). */
export async function readJsonBody(request: Request): Promise<Record<string, unknown> | Response> {
  let text: string;
  try {
    text = await request.text();
  } catch {
    return apiError(413, 'too_large', 'the request body is too large (at most 1 MiB)');
  }
  if (exceedsJsonDepth(text, MAX_BODY_DEPTH)) return apiError(400, 'invalid', `the JSON body nests deeper than ${MAX_BODY_DEPTH} levels`);
  try {
    const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through.
  }
  return apiError(400, 'invalid', 'expected a JSON object body');
}
