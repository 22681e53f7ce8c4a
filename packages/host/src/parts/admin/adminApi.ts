import { readWebBody } from '@capnode/toolkit/http';
import { isHostError } from '../../errors.js';
import type { SettingsPatchResult } from '../../config/settingsPatch.js';
import { auditedSettingsPatch, auditedTokenRotation, type ControlAudit } from '../../audit/controlAudit.js';
import { isApprovalDecision, type ApprovalBroker, type ApprovalEvent } from '@capnode/capabilities';

/** What the admin routes need from the host. */
export interface AdminApiOptions {
  readonly broker: ApprovalBroker;
  /** The host's status report (`GET /_capnode/status`). */
  readonly status: () => unknown;
  /** Rotates the MCP token and makes the listener accept only the new one. */
  readonly rotateToken: () => Promise<void>;
  /** Rereads the client tokens (`POST /_capnode/token/reload`), after `capnode token add|revoke` changed them. */
  readonly reloadTokens?: () => Promise<void>;
  /** A fresh one-time dashboard login URL (`POST /_capnode/ui/login`); throws when the dashboard is not running. */
  readonly dashboardLogin?: () => string;
  /** Applies a partial settings change (`PATCH /_capnode/settings`), as the dashboard's `PATCH /api/settings` does. */
  readonly patchSettings?: (patch: unknown) => Promise<SettingsPatchResult>;
  /** Loads and unloads plugins to match settings.json `plugins` (`POST /_capnode/plugins/sync`); resolves with every plugin's status. */
  readonly syncPlugins?: () => Promise<readonly unknown[]>;
  /** Adds a control record to `audit.log` (transport `admin`): settings changes and token rotations made here. */
  readonly audit?: ControlAudit;
  /** Aborted when the host closes: ends the approval event streams, so the listener can drain. */
  readonly signal?: AbortSignal;
}

/** Interval of the comment lines that keep an idle approval event stream open through proxies and idle timers. */
const STREAM_KEEP_ALIVE_MS = 15_000;

/**
 * `GET /_capnode/approvals/events`: a server-sent event stream of the broker's events, starting with
 * a `snapshot` of the pending requests, then `requested` and `resolved` as they happen.
 */
function approvalEvents(broker: ApprovalBroker, request: Request, closing: AbortSignal | undefined): Response {
  const encoder = new TextEncoder();
  let stop: () => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (event: string, data: unknown) => {
        try {
          controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
        } catch {
          stop();
        }
      };
      const unsubscribe = broker.subscribe((event: ApprovalEvent) => {
        if (event.type === 'requested') write('requested', { approval: event.approval });
        else if (event.type === 'resolved') write('resolved', { approval: event.approval, decision: event.decision, settlement: event.settlement });
      });
      const keepAlive = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
        } catch {
          stop();
        }
      }, STREAM_KEEP_ALIVE_MS);
      (keepAlive as { unref?: () => void }).unref?.();
      let stopped = false;
      stop = () => {
        if (stopped) return;
        stopped = true;
        unsubscribe();
        clearInterval(keepAlive);
        request.signal.removeEventListener('abort', stop);
        closing?.removeEventListener('abort', stop);
        try {
          controller.close();
        } catch {
          // Already closed by the reader.
        }
      };
      request.signal.addEventListener('abort', stop, { once: true });
      closing?.addEventListener('abort', stop, { once: true });
      write('snapshot', { approvals: broker.list() });
      if (closing?.aborted) stop();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
}

/** Largest admin request body accepted. */
const MAX_BODY = 64 * 1024;

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

async function readJson(request: Request): Promise<Record<string, unknown> | Response> {
  const read = await readWebBody(request, MAX_BODY);
  if (read.kind === 'too-large') return reply(413, { error: 'request body too large' });
  if (read.kind === 'aborted') throw new Error('the admin request body could not be read');
  const text = read.text;
  try {
    const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through to the 400 below.
  }
  return reply(400, { error: 'expected a JSON object body' });
}

/**
 * The admin routes under `/_capnode/`, served by the MCP listener behind the same gates but checked
 * against the admin token, which MCP clients never get: an agent holding the MCP token must not be
 * able to approve its own exec requests.
 *
 * - `GET  /_capnode/approvals` → `{ approvals: PendingApproval[] }`
 * - `POST /_capnode/approvals` `{ id, decision: 'allow-once' | 'allow-always' | 'deny', argsHash? }` → 200, 404 for an
 *   unknown id, 409 when `argsHash` (the hash the person was shown) is not the request's
 * - `GET  /_capnode/approvals/events` → `text/event-stream`: `snapshot`, then `requested` / `resolved` events
 * - `POST /_capnode/token/rotate` → 200 once the listener accepts only the new MCP token
 * - `POST /_capnode/token/reload` → 200 once the listener accepts exactly the client tokens on file (a revoked one gets 401)
 * - `GET  /_capnode/status` → the host status
 * - `POST /_capnode/ui/login` → `{ url }`: a one-time dashboard login URL (single use, 60 s); 409 when the dashboard is off
 * - `POST /_capnode/plugins/sync` → `{ plugins: PluginStatus[] }` once the plugins settings.json lists now are loaded (or failed) and the others unloaded; 409 when settings.json cannot be read
 * - `PATCH /_capnode/settings` (a partial settings object) → `{ settings, applied, restartNeeded }`, or 400 with `fields`; 409 with `code: "settings_locked"` when another process held settings.json.lock too long
 */
export function createAdminHandler(options: AdminApiOptions): (request: Request) => Promise<Response> {
  const audit: ControlAudit = options.audit ?? (() => {});
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    const method = request.method.toUpperCase();
    switch (path) {
      case '/_capnode/approvals': {
        if (method === 'GET') return reply(200, { approvals: options.broker.list(), allowed: options.broker.answered() });
        if (method !== 'POST') return reply(405, { error: 'use GET or POST' });
        const body = await readJson(request);
        if (body instanceof Response) return body;
        const { id, decision, argsHash } = body;
        if (typeof id !== 'string' || !id) return reply(400, { error: 'id must be the approval id (a string)' });
        if (!isApprovalDecision(decision)) return reply(400, { error: "decision must be 'allow-once', 'allow-always' or 'deny'" });
        if (argsHash !== undefined && typeof argsHash !== 'string') return reply(400, { error: 'argsHash must be the hash shown with the approval (a string)' });
        const resolution = options.broker.answer(id, decision, argsHash === undefined ? {} : { argsHash });
        if (resolution === 'unknown') return reply(404, { error: `no pending approval '${id}' (already answered, expired, or never existed)` });
        if (resolution === 'hash_mismatch') return reply(409, { error: `approval '${id}' is not the request that was shown (its argument hash differs); nothing was answered` });
        return reply(200, { ok: true, id, decision });
      }
      case '/_capnode/approvals/events':
        if (method !== 'GET') return reply(405, { error: 'use GET' });
        return approvalEvents(options.broker, request, options.signal);
      case '/_capnode/token/rotate':
        if (method !== 'POST') return reply(405, { error: 'use POST' });
        await auditedTokenRotation(options.rotateToken, audit);
        return reply(200, { ok: true });
      case '/_capnode/token/reload':
        if (method !== 'POST') return reply(405, { error: 'use POST' });
        if (options.reloadTokens === undefined) return reply(404, { error: 'this host does not reload tokens' });
        await options.reloadTokens();
        audit({ command: 'capnode.token.reload' });
        return reply(200, { ok: true });
      case '/_capnode/status':
        if (method !== 'GET') return reply(405, { error: 'use GET' });
        return reply(200, options.status());
      case '/_capnode/ui/login': {
        if (method !== 'POST') return reply(405, { error: 'use POST' });
        if (!options.dashboardLogin) return reply(404, { error: 'this host has no dashboard' });
        try {
          return reply(200, { url: options.dashboardLogin() });
        } catch (error) {
          return reply(409, { error: (error as Error).message });
        }
      }
      case '/_capnode/plugins/sync': {
        if (method !== 'POST') return reply(405, { error: 'use POST' });
        if (!options.syncPlugins) return reply(404, { error: 'this host cannot load plugins while it runs' });
        try {
          return reply(200, { plugins: await options.syncPlugins() });
        } catch (error) {
          if (isHostError(error) && error.code === 'invalid_settings') return reply(409, { error: error.message, code: error.code });
          throw error;
        }
      }
      case '/_capnode/settings': {
        if (method !== 'PATCH') return reply(405, { error: 'use PATCH' });
        if (!options.patchSettings) return reply(404, { error: 'this host cannot change settings' });
        const body = await readJson(request);
        if (body instanceof Response) return body;
        let result: SettingsPatchResult;
        try {
          result = await auditedSettingsPatch(options.patchSettings, body, audit);
        } catch (error) {
          if (isHostError(error) && error.code === 'settings_locked') return reply(409, { error: error.message, code: error.code });
          throw error;
        }
        if (!result.ok) return reply(400, { error: result.message, fields: result.fields });
        return reply(200, { settings: result.settings, applied: result.applied, restartNeeded: result.restartNeeded, ...(result.failed ? { failed: result.failed } : {}) });
      }
      default:
        return reply(404, { error: `unknown admin route ${path}` });
    }
  };
}
