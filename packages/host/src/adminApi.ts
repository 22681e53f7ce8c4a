import { isApprovalDecision, type ApprovalBroker } from '@capnode/capabilities';

/** What the admin routes need from the host. */
export interface AdminApiOptions {
  readonly broker: ApprovalBroker;
  /** The host's status report (`GET /_capnode/status`). */
  readonly status: () => unknown;
  /** Rotates the MCP token and makes the listener accept only the new one. */
  readonly rotateToken: () => Promise<void>;
}

/** Largest admin request body accepted. */
const MAX_BODY = 64 * 1024;

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

async function readJson(request: Request): Promise<Record<string, unknown> | Response> {
  const text = await request.text();
  if (text.length > MAX_BODY) return reply(413, { error: 'request body too large' });
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
 * - `POST /_capnode/approvals` `{ id, decision: 'allow-once' | 'allow-always' | 'deny' }` → 200, or 404 for an unknown id
 * - `POST /_capnode/token/rotate` → 200 once the listener accepts only the new MCP token
 * - `GET  /_capnode/status` → the host status
 */
export function createAdminHandler(options: AdminApiOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    const method = request.method.toUpperCase();
    switch (path) {
      case '/_capnode/approvals': {
        if (method === 'GET') return reply(200, { approvals: options.broker.list() });
        if (method !== 'POST') return reply(405, { error: 'use GET or POST' });
        const body = await readJson(request);
        if (body instanceof Response) return body;
        const { id, decision } = body;
        if (typeof id !== 'string' || !id) return reply(400, { error: 'id must be the approval id (a string)' });
        if (!isApprovalDecision(decision)) return reply(400, { error: "decision must be 'allow-once', 'allow-always' or 'deny'" });
        if (!options.broker.resolve(id, decision)) return reply(404, { error: `no pending approval '${id}' (already answered, expired, or never existed)` });
        return reply(200, { ok: true, id, decision });
      }
      case '/_capnode/token/rotate':
        if (method !== 'POST') return reply(405, { error: 'use POST' });
        await options.rotateToken();
        return reply(200, { ok: true });
      case '/_capnode/status':
        if (method !== 'GET') return reply(405, { error: 'use GET' });
        return reply(200, options.status());
      default:
        return reply(404, { error: `unknown admin route ${path}` });
    }
  };
}
