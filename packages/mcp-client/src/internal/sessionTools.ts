import { waitFor } from '@capnode/toolkit';
import type { Client } from '@modelcontextprotocol/client';
import { capText } from '../redact.js';
import type { Logger } from '../types.js';
import { isListTimeout, listServerTools, type ListedTool } from './toolListing.js';

/** Longest a caller of `tools()` waits for a listing that is under way, counted from its start. */
export const LIST_WAIT_MS = 1_000;
/** First retry delay of a failed listing; doubles up to {@link MAX_LIST_RETRY_MS}. */
const LIST_RETRY_MS = 1_000;
const MAX_LIST_RETRY_MS = 30_000;
const MAX_WARNINGS = 20;

/** What {@link SessionTools} needs from its session. */
export interface SessionToolsHost {
  readonly server: string;
  readonly logger: Logger;
  /** The client to list with, or none while disconnected. */
  client(): Client | undefined;
  /** Aborted when the session closes. */
  readonly signal: AbortSignal;
  describe(error: unknown): string;
  /** The listed tools changed. */
  changed(): void;
  /** A listing warning or failure, for the runtime's event stream. */
  diagnostic?(level: 'warning' | 'error', message: string): void;
}

interface Listing {
  readonly promise: Promise<void>;
  readonly startedAt: number;
  /** Background retries are not waited for: a hung server must not stall `tools()` again and again. */
  readonly waitable: boolean;
}

/**
 * One server's tool list: the last good listing, kept while re-lists fail or hang, and the
 * background retry with backoff. Re-lists are coalesced: a notification storm during a listing
 * causes one more listing after it, not one per notification.
 */
export class SessionTools {
  /** The last good listing. */
  tools: readonly ListedTool[] = [];
  #names = new Set<string>();
  warnings: string[] = [];
  /** Set while the list is known to be out of date. */
  stale = true;
  /** The last `tools/list` failure while the list could not be refreshed, scrubbed. */
  listError: string | undefined;
  /** Whether any listing has succeeded on this session. */
  listed = false;
  #listing: Listing | undefined;
  #again = false;
  #failures = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #host: SessionToolsHost;

  constructor(host: SessionToolsHost) {
    this.#host = host;
  }

  has(tool: string): boolean {
    return this.#names.has(tool);
  }

  /** Marks the list out of date and re-lists now (or right after the listing under way). */
  invalidate(timeoutMs: number): void {
    this.stale = true;
    if (this.#listing) {
      this.#again = true;
      return;
    }
    this.#clearRetry();
    this.#start(timeoutMs, true);
  }

  /** A new connection: forget retry state and list on it. */
  reset(timeoutMs: number): void {
    this.#failures = 0;
    this.#again = false;
    this.#clearRetry();
    this.stale = true;
    this.#start(timeoutMs, true);
  }

  /**
   * Brings the list up to date as far as a caller may wait: lists when stale (unless a retry is
   * scheduled), then waits for a waitable listing at most until {@link LIST_WAIT_MS} after it began,
   * or without bound when `full` (startup, `refresh()`). Never rejects.
   */
  async ensure(timeoutMs: number, full = false, signal?: AbortSignal): Promise<void> {
    if (this.#host.signal.aborted || !this.#host.client()) return;
    if (this.stale && !this.#listing && (full || this.#retryTimer === undefined)) {
      this.#clearRetry();
      this.#start(timeoutMs, true);
    }
    const listing = this.#listing;
    if (!listing || (!full && !listing.waitable)) return;
    const remaining = full ? undefined : listing.startedAt + LIST_WAIT_MS - performance.now();
    if (remaining !== undefined && remaining <= 0) return;
    await waitFor(listing.promise, { ...(remaining === undefined ? {} : { timeoutMs: remaining }), ...(signal ? { signal } : {}) }).catch(() => {});
  }

  /** Stops retrying (the session closed or lost its connection). */
  stop(): void {
    this.#clearRetry();
    this.#again = false;
  }

  #clearRetry(): void {
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #start(timeoutMs: number, waitable: boolean): void {
    const client = this.#host.client();
    if (!client || this.#host.signal.aborted) return;
    const promise = this.#list(client, timeoutMs)
      .catch((error: unknown) => this.#host.logger.error(`mcp server '${this.#host.server}': tool listing failed unexpectedly: ${this.#host.describe(error)}`))
      .finally(() => {
        if (this.#listing?.promise === promise) this.#listing = undefined;
        if (this.#again && !this.#host.signal.aborted) {
          this.#again = false;
          this.#clearRetry();
          this.#start(timeoutMs, true);
        }
      });
    this.#listing = { promise, startedAt: performance.now(), waitable };
  }

  async #list(client: Client, timeoutMs: number): Promise<void> {
    this.stale = false;
    const host = this.#host;
    if (!client.getServerCapabilities()?.tools) {
      this.#set([], []);
      return;
    }
    const { tools, warnings, pages, error } = await listServerTools(client, host.signal, timeoutMs);
    if (host.signal.aborted || host.client() !== client) return;
    if (error === undefined) {
      this.#set(tools, warnings);
      return;
    }
    const detail = isListTimeout(error) ? `no answer within ${Math.round(timeoutMs / 1000)} s` : capText(host.describe(error), 300);
    if (pages > 1) {
      warnings.push(`tools/list failed on page ${pages}; kept the first ${tools.length} tools: ${detail}`);
      this.#set(tools, warnings);
      return;
    }
    // Keep the last good list; retry in the background.
    this.stale = true;
    this.#failures += 1;
    this.listError = capText(`tools/list failed: ${detail}`, 300);
    this.warnings = [this.listError, ...warnings].slice(0, MAX_WARNINGS);
    const delay = Math.min(MAX_LIST_RETRY_MS, LIST_RETRY_MS * 2 ** (this.#failures - 1));
    host.logger.warn(`mcp server '${host.server}': ${this.listError}; ${this.listed ? 'keeping the last listed tools, ' : ''}retrying in ${Math.round(delay / 1000)} s`);
    host.diagnostic?.('error', this.listError);
    this.#clearRetry();
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (!this.#listing) this.#start(timeoutMs, false);
    }, delay);
    this.#retryTimer.unref?.();
  }

  #set(tools: readonly ListedTool[], warnings: string[]): void {
    this.tools = tools;
    this.#names = new Set(tools.map((tool) => tool.name));
    this.listed = true;
    this.listError = undefined;
    this.#failures = 0;
    this.warnings = warnings.slice(0, MAX_WARNINGS);
    for (const warning of this.warnings) {
      this.#host.logger.warn(`mcp server '${this.#host.server}': ${warning}`);
      this.#host.diagnostic?.('warning', warning);
    }
    this.#host.changed();
  }
}
