import type { McpConfig, McpServerConfig } from './config.js';

/** Replacement text for a scrubbed secret. */
export const REDACTED = '[redacted]';
/** Longest tool error text the model sees. */
export const MAX_ERROR_TEXT = 500;
/** Secrets shorter than this are not searched for in text (flags like `0` or `true` would mangle it). */
const MIN_SECRET_LENGTH = 6;

/** A stand-in for one secret value that says it exists without showing it. */
export function maskSecret(value: string): string {
  return `<redacted, ${value.length} chars>`;
}

/** A copy of a server entry safe to log or print: `env` and `headers` keep their names, lose their values; so does `auth.clientSecret`. */
export function redactServerConfig(server: McpServerConfig): McpServerConfig {
  const mask = (record: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, maskSecret(value)]));
  const auth = server.auth?.type === 'oauth' && server.auth.clientSecret !== undefined ? { ...server.auth, clientSecret: maskSecret(server.auth.clientSecret) } : server.auth;
  return { ...server, env: mask(server.env), headers: mask(server.headers), ...(auth === undefined ? {} : { auth }) };
}

/** A copy of a whole config safe to log or print (see {@link redactServerConfig}). */
export function redactConfig(config: McpConfig): McpConfig {
  return { ...config, servers: config.servers.map(redactServerConfig) };
}

/** Every secret value a config holds (`env` and `headers` values and `auth.clientSecret` of every server). */
export function collectSecrets(servers: readonly McpServerConfig[]): string[] {
  const values = new Set<string>();
  for (const server of servers) {
    for (const value of [...Object.values(server.env), ...Object.values(server.headers)]) {
      values.add(value);
      const bearer = /^\s*(?:bearer|basic|token)\s+(.+)$/i.exec(value);
      if (bearer?.[1]) values.add(bearer[1].trim());
    }
    if (server.auth?.type === 'oauth' && server.auth.clientSecret !== undefined) values.add(server.auth.clientSecret);
  }
  return [...values];
}

/** Credential shapes scrubbed everywhere; `keep` is the replacement (`$1` keeps a label such as `api_key=`). */
const GENERIC_PATTERNS: readonly { readonly pattern: RegExp; readonly keep: string }[] = [
  { pattern: /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s,;"']+/gi, keep: `$1${REDACTED}` },
  { pattern: /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, keep: `$1${REDACTED}` },
  { pattern: /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, keep: REDACTED },
  { pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, keep: REDACTED },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, keep: REDACTED },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, keep: REDACTED },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g, keep: REDACTED },
  {
    pattern: /\b((?:api[_-]?key|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|secret|password|passwd|client[_-]?secret)["']?\s*[:=]\s*["']?)[^\s&,;"'}]+/gi,
    keep: `$1${REDACTED}`,
  },
];

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds a function that removes secrets from text: every given value (and its URL-encoded form),
 * plus common credential shapes (bearer tokens, `api_key=…`, provider key prefixes).
 *
 * @example
 * const scrub = createSecretScrubber(collectSecrets(config.servers));
 * logger.warn(scrub(String(error)));
 */
export function createSecretScrubber(secrets: Iterable<string> = []): SecretScrubber {
  const literals = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    literals.add(secret);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) literals.add(encoded);
  }
  const literal = literals.size
    ? new RegExp([...literals].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g')
    : undefined;
  const scrub = (text: string) => {
    let out = text;
    for (const { pattern, keep } of GENERIC_PATTERNS) out = out.replace(pattern, keep);
    return literal ? out.replace(literal, REDACTED) : out;
  };
  return Object.assign(scrub, { longestSecret: Math.max(0, ...[...literals].map((value) => value.length)) });
}

/** A scrubber from {@link createSecretScrubber}: removes secrets from text; knows the length of the longest one. */
export type SecretScrubber = ((text: string) => string) & { readonly longestSecret: number };

/** Room for a credential shape (`authorization: bearer …`, `sk-…`) that starts before a cut. */
const PATTERN_MARGIN = 512;
/** Assumed longest secret when the scrubber does not say. */
const UNKNOWN_SECRET_LENGTH = 4096;

/**
 * Scrubs, then cuts to `max` characters: the one order for anything bounded that may hold a secret
 * (logs, diagnostics, error text, audit fields). Cutting first could leave the start of a secret
 * that no longer matches. Only a window somewhat longer than `max` (by the longest secret) is
 * scrubbed, so a huge text costs little; the window grows when scrubbing shrank it below `max`.
 *
 * @example
 * logger.warn(scrubAndCap(String(error), scrub, 300));
 */
export function scrubAndCap(text: string, scrub: (text: string) => string, max = MAX_ERROR_TEXT): string {
  const longest = (scrub as Partial<SecretScrubber>).longestSecret ?? UNKNOWN_SECRET_LENGTH;
  const margin = longest + PATTERN_MARGIN;
  for (let window = max + margin; ; window *= 2) {
    if (window >= text.length) return capText(scrub(text), max);
    const scrubbed = scrub(text.slice(0, window));
    // The window's last `margin` characters may end in a cut secret; keep them out of the result.
    if (scrubbed.length - margin >= max) return capText(scrubbed, max);
  }
}

/** Cuts text to `max` characters (default 500), marking the cut. Text that may hold secrets goes through {@link scrubAndCap} instead. */
export function capText(text: string, max = MAX_ERROR_TEXT): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}
