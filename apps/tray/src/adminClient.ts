import { listRuntimeStates, readTokenFile, type HostPaths } from '@capnode/host/setup';
import { createDeadline } from '@capnode/toolkit';
import { TrayError } from './errors.js';

/** Deadline of one admin request (not of the approval event stream). */
export const ADMIN_REQUEST_TIMEOUT_MS = 5_000;

/** Where the admin routes of a host are and the token they take. */
export interface AdminTarget {
  /** Base URL ending in `/_capnode/`. */
  readonly url: string;
  readonly token: string | undefined;
}

/**
 * The admin routes of the host running on `paths`, with the admin token; `undefined` when no host
 * runs. Read again on every call, so a host restarted on another port is found: `host.json` while
 * the MCP listener runs, else the host's admin-only listener (`run/node-<pid>.json`, published while
 * the MCP server is paused or off). Stdio hosts (one per MCP client) are not attached to.
 */
export function discoverAdminTarget(paths: HostPaths): AdminTarget | undefined {
  const running = listRuntimeStates(paths).find((state) => state.kind === 'http' || state.kind === 'node');
  if (!running) return undefined;
  return { url: running.adminUrl, token: readAdminToken(paths) };
}

function readAdminToken(paths: HostPaths): string | undefined {
  try {
    return readTokenFile(paths.adminToken);
  } catch (error) {
    throw new TrayError('unauthorized', (error as Error).message, { cause: error });
  }
}

/** The `error` of an admin or dashboard error body (`{ error: string }` or `{ error: { message } }`). */
function errorText(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  const message = typeof error === 'string' ? error : (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return undefined;
  const fields = (body as { fields?: unknown }).fields ?? (error as { fields?: unknown } | null)?.fields;
  const named = Array.isArray(fields) ? fields.filter((field): field is { path: string; message: string } => typeof field?.path === 'string' && typeof field?.message === 'string') : [];
  return named.length > 0 ? `${message} (${named.map((field) => `${field.path}: ${field.message}`).join('; ')})` : message;
}

/**
 * One JSON request to an admin route (`route` relative to `/_capnode/`). Maps what goes wrong to
 * TrayErrors: `host_unreachable` (no answer), `unauthorized` (401), `request_failed` (other statuses,
 * with the host's message).
 */
export async function adminRequest<T>(target: AdminTarget, route: string, init: { method?: 'GET' | 'POST' | 'PATCH'; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  using deadline = createDeadline(init.signal ? { timeoutMs: ADMIN_REQUEST_TIMEOUT_MS, signal: init.signal } : { timeoutMs: ADMIN_REQUEST_TIMEOUT_MS });
  const { signal } = deadline;
  const url = new URL(route, target.url).href;
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal,
    });
  } catch (error) {
    const why = deadline.timedOut ? `no answer within ${ADMIN_REQUEST_TIMEOUT_MS / 1000} s` : (error as Error).message;
    throw new TrayError('host_unreachable', `the capnode host at ${target.url} is not reachable (${why})`, { cause: error });
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.status === 401) throw new TrayError('unauthorized', `the host at ${target.url} refused the admin token (HTTP 401); start the tray as the user and with the CAPNODE_HOME the host runs with`);
  if (!response.ok) throw new TrayError('request_failed', `the host refused ${init.method ?? 'GET'} ${route} (HTTP ${response.status})${errorText(body) ? `: ${errorText(body)}` : ''}`);
  return body as T;
}
