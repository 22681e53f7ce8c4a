import type { McpServerConfig } from '@capnode/mcp-client';
import { collectSecrets, createSecretScrubber, scrubAndCap, type SecretScrubber } from '@capnode/mcp-client/redact';
import { GATEWAY_TOKEN_ENV } from '../config/paths.js';
import { resolveMcpClientSettings } from '../config/mcpClientSettings.js';
import type { Settings } from '../config/settings.js';

/** Longest host log line; longer ones are cut after scrubbing. */
export const MAX_LOG_LINE = 8 * 1024;

/**
 * Scrubs a host log line of secrets (the host's tokens, the gateway token, imported servers' env
 * and header values, common credential shapes), then cuts it to {@link MAX_LOG_LINE}: scrub first,
 * so a secret straddling the cut never shows half. `secrets` is read again when its list changes (a
 * rotated token, edited settings).
 */
export function createLogScrubber(secrets: () => readonly (string | undefined)[]): (message: string) => string {
  let key = '';
  let scrubber: SecretScrubber = createSecretScrubber();
  const current = (): SecretScrubber => {
    const values = secrets().filter((value): value is string => typeof value === 'string' && value.length > 0);
    const next = values.join('\u0000');
    if (next !== key) {
      key = next;
      scrubber = createSecretScrubber(values);
    }
    return scrubber;
  };
  return (message) => scrubAndCap(message, current(), MAX_LOG_LINE);
}

const cache = new WeakMap<Settings, readonly string[]>();

/** The secrets `settings` and `env` hold (the gateway token, imported servers' env and header values), cached per settings object. */
export function hostSecrets(settings: Settings, env: Readonly<Record<string, string | undefined>>): readonly (string | undefined)[] {
  let values = cache.get(settings);
  if (!values) {
    let servers: McpServerConfig[] = [];
    try {
      servers = [...resolveMcpClientSettings(settings).config.servers];
    } catch {
      // Invalid mcpClient section: reported elsewhere; no server secrets to know.
    }
    values = [...(settings.gateway.token ? [settings.gateway.token] : []), ...Object.values(settings.openagent.headers), ...collectSecrets(servers)];
    cache.set(settings, values);
  }
  return [...values, env[GATEWAY_TOKEN_ENV]];
}
