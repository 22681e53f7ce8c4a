// The dashboard's HTTP API (same origin, session cookie). State-changing requests carry the CSRF
// token from GET /api/session; the browser adds the Origin header the server checks. Paths are
// under the dashboard's base path.
import { defineBrandedErrorClass } from '@capnode/toolkit';
import { underBase } from './base.js';
import type { SessionView } from './types.js';

/** One field the host refused, as `PATCH /api/settings` and the other writes report it. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** A refused API request: the host's error code and message, and per-field problems when it sent them. */
export class ApiError extends defineBrandedErrorClass('ApiError') {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: readonly FieldError[] = [],
  ) {
    super(message);
  }
}

/** `GET /api/session`, as the host's route sends it. */
export type Session = SessionView;

let csrfToken: string | undefined;

function fieldPath(path: unknown): string {
  if (Array.isArray(path)) return path.join('.');
  return String(path ?? '');
}

async function readError(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: string; message?: string; fields?: { path: unknown; message: string }[] } } | undefined)?.error;
  const fields = (error?.fields ?? []).map((field) => ({ path: fieldPath(field.path), message: String(field.message) }));
  return new ApiError(response.status, error?.code ?? `http_${response.status}`, error?.message ?? `The host answered ${response.status}.`, fields);
}

/** Calls the API; a non-2xx answer throws {@link ApiError}. */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') {
    if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(underBase(path), {
    method,
    headers,
    credentials: 'same-origin',
    ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
  });
  if (!response.ok) throw await readError(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Loads the session (and its CSRF token); a 401 means no session: open the dashboard with `capnode ui`. */
export async function loadSession(): Promise<Session> {
  const session = await api<Session>('GET', '/api/session');
  csrfToken = session.csrfToken;
  return session;
}

/** True when the host has no such route (an older or partial host): the page says the feature is not there. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 404 || error.status === 405) && !error.fields.length;
}

/** A short, human message for any failure. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
