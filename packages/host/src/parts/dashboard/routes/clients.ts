import { loadOrCreateToken } from '@capnode/mcp-server/node';
import { ensureClientToken } from '../../../config/clientTokens.js';
import { clientHoldsToken, clientSnippet, isClientId, listClientTargets, previewClientConfig, writeClientConfig, type ClientConfigOptions, type ClientId } from '../../../setup/clientConfigs.js';
import { isHostError } from '../../../errors.js';
import { defaultMcpUrl } from '../../../config/paths.js';
import type { ClientPreviewView, ClientsView, ClientView, ClientWriteView } from '../apiTypes.js';
import { cliLaunch } from '../cliLaunch.js';
import { apiError, json, readJsonBody } from '../reply.js';
import { maskSecret } from './token.js';
import type { Route, RouteContext } from '../types.js';

/** What the snippets point at: the listening MCP endpoint (else the configured one), the default token, and `capnode mcp` for stdio clients. */
async function configOptions({ host, signal }: RouteContext): Promise<ClientConfigOptions> {
  const url = host.status().mcp.url ?? defaultMcpUrl(host.paths);
  const { token } = await loadOrCreateToken(host.paths.mcpToken);
  return {
    url,
    token,
    userHome: host.userHome,
    env: host.env,
    // A project directory means nothing to a dashboard: only the user's own files count.
    cwd: host.userHome,
    launch: cliLaunch({ env: host.env, home: host.paths.home, userHome: host.userHome, script: process.argv[1] }),
    signal,
  };
}

/**
 * `options` with `id`'s own token when its config holds one: the token named after the client, made
 * (and the running listener told) when it does not exist yet, so its calls carry the client's name.
 */
async function clientOptions(context: RouteContext, id: ClientId, options: ClientConfigOptions): Promise<ClientConfigOptions> {
  if (!clientHoldsToken(id)) return options;
  const { token, created } = await ensureClientToken(context.host.paths, id);
  if (created) {
    context.host.log('info', `dashboard: made the MCP token '${id}' for ${id}`);
    await context.host.reloadTokens();
  }
  return { ...options, token };
}

/**
 * The snippet's instructions as one paragraph for a page: its lines are wrapped for a terminal, and
 * the line that introduces the command goes (the page shows the command on its own).
 */
function paragraph(instructions: readonly string[], command: readonly string[] | undefined): string[] {
  const text = (command ? instructions.slice(1) : instructions).join(' ').replace(/^or /, '');
  return text ? [text.charAt(0).toUpperCase() + text.slice(1)] : [];
}

/** `value` (a snippet: strings, arrays, objects) with every occurrence of `secret` replaced by `mask`. */
function maskIn<T>(value: T, secret: string, mask: string): T {
  if (typeof value === 'string') return value.split(secret).join(mask) as T;
  if (Array.isArray(value)) return value.map((item) => maskIn(item, secret, mask)) as T;
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskIn(item, secret, mask)])) as T;
  return value;
}

/** The client of `:id`, or the 404 reply. */
function clientOf(context: RouteContext): ClientId | Response {
  const id = context.params.id;
  return isClientId(id) ? id : apiError(404, 'not_found', `no client '${id}'`);
}

/** A HostError of the clients module as its reply: `conflict` 409, `invalid_config` 400 (the file is left alone). */
function failure(error: unknown): Response {
  if (isHostError(error)) {
    if (error.code === 'conflict') return apiError(409, 'conflict', error.message);
    if (error.code === 'invalid_config') return apiError(400, 'invalid', error.message);
    if (error.code === 'io') return apiError(409, 'unavailable', error.message);
  }
  throw error;
}

/**
 * `GET /api/clients` (every client with its snippet, config file and whether it already points
 * here), `POST /api/clients/:id/preview` (the masked diff and the `before` text) and
 * `POST /api/clients/:id/write` `{ expected }` (the previewed `before`: a file changed since is
 * refused with 409; backup kept, other entries untouched), as `capnode config <client> --write`, and
 * `POST /api/clients/:id/token` (the client's own token, for Copy). A client whose config holds the
 * token gets one named after it (made on first use, reused after).
 */
export const clientRoutes: readonly Route[] = [
  [
    'GET',
    '/api/clients',
    async (context) => {
      const shared = await configOptions(context);
      const targets = await listClientTargets(shared);
      const clients: ClientView[] = [];
      for (const target of targets) {
        // Each client's own token, shown masked as the Token page does; Copy reveals it (POST /api/clients/:id/token).
        const options = await clientOptions(context, target.id, shared);
        const tokenMask = maskSecret(options.token);
        const hide = <T>(value: T): T => maskIn(value, options.token, tokenMask);
        const { snippet, instructions, command } = clientSnippet(target.id, options);
        const masked = { ...target, snippet: hide(snippet), instructions: paragraph(instructions, command), ...(command ? { command: hide(command) } : {}) };
        clients.push(JSON.stringify(masked).includes(tokenMask) ? { ...masked, tokenMask } : masked);
      }
      return json(200, { clients } satisfies ClientsView);
    },
  ],
  [
    'POST',
    '/api/clients/:id/preview',
    async (context) => {
      const id = clientOf(context);
      if (id instanceof Response) return id;
      try {
        const preview = await previewClientConfig(id, await clientOptions(context, id, await configOptions(context)));
        return json(200, { path: preview.path, diff: preview.diff, before: preview.before, created: preview.created, changed: preview.changed } satisfies ClientPreviewView);
      } catch (error) {
        return failure(error);
      }
    },
  ],
  [
    'POST',
    '/api/clients/:id/write',
    async (context) => {
      const id = clientOf(context);
      if (id instanceof Response) return id;
      const body = await readJsonBody(context.request);
      if (body instanceof Response) return body;
      if (typeof body.expected !== 'string') {
        return apiError(400, 'invalid', 'expected is required: the `before` text of the preview the user confirmed', [{ path: 'expected', message: 'expected a string' }]);
      }
      try {
        const written = await writeClientConfig(id, { ...(await clientOptions(context, id, await configOptions(context))), expected: body.expected });
        context.host.log('info', `dashboard: wrote the ${id} client config ${written.path}${written.backup ? ` (backup ${written.backup})` : ''}`);
        return json(200, { path: written.path, changed: written.changed, ...(written.backup ? { backup: written.backup } : {}) } satisfies ClientWriteView);
      } catch (error) {
        return failure(error);
      }
    },
  ],
  [
    'POST',
    '/api/clients/:id/token',
    async (context) => {
      const id = clientOf(context);
      if (id instanceof Response) return id;
      const { token } = await clientOptions(context, id, await configOptions(context));
      context.host.log('info', `dashboard: the MCP token for ${id} was revealed`);
      context.host.audit({ command: 'capnode.token.reveal' });
      return json(200, { token });
    },
  ],
];
