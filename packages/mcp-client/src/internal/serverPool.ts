import { CapabilityError } from '@capnode/capabilities';
import { createDeadline, isPlainObject, waitFor } from '@capnode/toolkit';
import { SdkError, SdkErrorCode, type Implementation } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../config.js';
import { capText } from '../redact.js';
import type { Logger, McpConnector, McpRuntimeEvent, PinnedResource, ServerDiagnostic } from '../types.js';
import { readResource, type ServerAccess } from './serverTools.js';
import type { SelfHostIdentity } from '../selfHost.js';
import type { ServerRequestHooks } from './serverRequests.js';
import { ServerSession, type SessionHost } from './serverSession.js';
import { errorText } from './util.js';

/** Longest `close()` waits for work a connector does not end on abort. */
export const CLOSE_WAIT_MS = 10_000;

/** What a {@link ServerPool} is built from. */
export interface ServerPoolOptions {
  readonly connector: McpConnector;
  readonly logger: Logger;
  readonly clientInfo: Implementation;
  /** The host instance this runtime runs in; a server declaring it is refused (`self_host`). */
  readonly hostInstance?: string | undefined;
  /** Recognises the host's own entry (see {@link SelfHostIdentity}). */
  readonly hostIdentity?: SelfHostIdentity | undefined;
  /** The current secret scrubber (it follows reloads). */
  readonly scrub: (text: string) => string;
  /** A server said its tools changed (`notifications/tools/list_changed`). */
  readonly onToolsChanged: (session: ServerSession) => void;
  /** A server's listed tools (or capabilities) changed; the catalog must be rebuilt. */
  readonly onCatalogChanged: (session: ServerSession) => void;
  /** Answers to server-initiated requests (sampling, elicitation, roots). */
  readonly requestHooks: ServerRequestHooks;
  readonly emit: (event: McpRuntimeEvent) => void;
}

/**
 * The granted servers of one runtime: starts them in parallel, keeps one {@link ServerSession} per
 * server across reloads when its entry is unchanged, reads pinned resources, and owns every
 * promise that must settle before `close()` resolves (late connections, closing transports).
 */
export class ServerPool {
  readonly sessions = new Map<string, ServerSession>();
  readonly pinned: PinnedResource[] = [];
  readonly #options: ServerPoolOptions;
  readonly #host: SessionHost;
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;

  constructor(servers: readonly McpServerConfig[], options: ServerPoolOptions) {
    this.#options = options;
    this.#host = {
      connector: options.connector,
      logger: options.logger,
      scrub: (text) => options.scrub(text),
      clientInfo: options.clientInfo,
      hostInstance: options.hostInstance,
      hostIdentity: options.hostIdentity,
      describe: (error) => this.describe(error),
      closedError: () => this.closedError(),
      toolsChanged: (session) => options.onToolsChanged(session),
      catalogChanged: (session) => options.onCatalogChanged(session),
      track: (promise) => this.track(promise),
      requestHooks: options.requestHooks,
      emit: (event) => options.emit(event),
    };
    for (const server of servers) this.sessions.set(server.name, new ServerSession(server, this.#host));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A failure as one scrubbed, capped line. */
  describe(error: unknown): string {
    if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) return 'the connection closed';
    return capText(this.#options.scrub(errorText(error)), 400);
  }

  closedError(): Error {
    return new CapabilityError('failed', 'The MCP runtime is closed.');
  }

  /** Keeps `promise` until it settles; `close()` waits for every tracked promise. */
  track(promise: Promise<unknown>): void {
    const tracked = promise.catch(() => {}).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  diagnostics(): ServerDiagnostic[] {
    return [...this.sessions.values()].map((session) => session.diagnostic());
  }

  /** How the built-in resource and prompt tools reach each server. */
  access(serverPart: (server: string) => string): ServerAccess[] {
    return [...this.sessions.values()].map((session) => sessionAccess(session, serverPart(session.server.name), this.#options.scrub));
  }

  /**
   * Connects and lists the given sessions in parallel, calling `onReady` for each the moment it is
   * ready, independent of the others; a server that fails or hangs becomes a diagnostic. Resolves
   * when every one has settled.
   */
  async start(list: readonly ServerSession[], signal: AbortSignal, onReady: (session: ServerSession) => void): Promise<void> {
    await Promise.all(
      list.map(async (session) => {
        try {
          await session.ensureConnected();
          await session.ensureTools(true);
        } catch {
          return;
        }
        if (this.#closed || session.closed || signal.aborted) return;
        onReady(session);
        await this.#readPinned(session, signal);
      }),
    );
  }

  /**
   * Replaces the server set: unchanged entries keep their session, the rest are closed or created.
   * Returns the new sessions, which the caller starts.
   */
  replace(servers: readonly McpServerConfig[]): ServerSession[] {
    const kept = new Map<string, ServerSession>();
    const fresh: ServerSession[] = [];
    for (const server of servers) {
      const old = this.sessions.get(server.name);
      if (old && !old.closed && sameEntry(old.server, server)) kept.set(server.name, old);
      else {
        const session = new ServerSession(server, this.#host);
        kept.set(server.name, session);
        fresh.push(session);
      }
    }
    for (const [name, old] of this.sessions) {
      if (kept.get(name) === old) continue;
      this.track(old.close());
      for (let i = this.pinned.length - 1; i >= 0; i -= 1) if (this.pinned[i]!.server === name) this.pinned.splice(i, 1);
    }
    this.sessions.clear();
    for (const [name, session] of kept) this.sessions.set(name, session);
    return fresh;
  }

  /**
   * Closes every session and waits until everything the pool started has settled: connect attempts
   * in flight or abandoned, late connections, closing transports. A custom connector that ignores
   * its abort signal is waited for at most {@link CLOSE_WAIT_MS}.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.sessions.values()].map((session) => session.close()));
    const settled = (async () => {
      while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    })();
    await waitFor(settled, { timeoutMs: CLOSE_WAIT_MS }).catch(() => {
      this.#options.logger.warn(`mcp: ${this.#pending.size} connection attempt(s) did not end within ${CLOSE_WAIT_MS / 1000} s of close`);
    });
  }

  async #readPinned(session: ServerSession, signal: AbortSignal): Promise<void> {
    const uris = session.server.pinnedResources;
    if (uris.length === 0 || !session.connection) return;
    const server = sessionAccess(session, session.server.name, this.#options.scrub);
    if (!session.capabilities.resources) {
      session.pinnedWarnings.push('pinned_resources ignored: the server does not support resources');
      return;
    }
    for (const uri of uris) {
      using deadline = createDeadline({ timeoutMs: session.startBudgetMs(), signal });
      try {
        const content = await readResource(server, uri, deadline.signal, 'pinned-resource');
        const omitted = content.length - 1;
        const first = content[0] as { text: string };
        this.pinned.push({ server: session.server.name, uri, text: omitted > 0 ? `${first.text}\n[${omitted} binary item(s) omitted]` : first.text });
      } catch (error) {
        const warning = capText(`pinned resource '${capText(uri, 200)}' could not be read: ${this.describe(error)}`, 300);
        session.pinnedWarnings.push(warning);
        session.report('warning', warning);
      }
    }
  }
}

function sessionAccess(session: ServerSession, part: string, scrub: (text: string) => string): ServerAccess {
  return {
    name: session.server.name,
    part,
    timeoutMs: session.server.toolTimeoutMs,
    scrub,
    supports: (which) => session.capabilities[which],
    connect: async (signal) => (await session.ensureConnected(signal)).client,
    async cachedList<T>(list: 'resources' | 'prompts', load: () => Promise<T>): Promise<T> {
      if (session.listCache.has(list)) return session.listCache.get(list) as T;
      // Only an answer is kept (a caller's abort must not fail others), and only if no list_changed
      // or reconnect came while it was loading.
      const epoch = session.listEpoch;
      const value = await load();
      if (session.listEpoch === epoch && !session.closed) session.listCache.set(list, value);
      return value;
    },
  };
}

/** Stable JSON of a server entry, to tell whether a reload changed it. */
function sameEntry(a: McpServerConfig, b: McpServerConfig): boolean {
  const stable = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(stable) : isPlainObject(value) ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, stable(value[key])])) : value;
  return JSON.stringify(stable(a)) === JSON.stringify(stable(b));
}
