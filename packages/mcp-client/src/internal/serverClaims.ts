import type { CommandAnnotations } from '@capnode/capabilities';
import { capText } from '../redact.js';

/** The MCP tool hints a server can claim about its own tool. */
const HINTS = { readOnlyHint: 'readOnly', destructiveHint: 'destructive', idempotentHint: 'idempotent', openWorldHint: 'openWorld' } as const;

/** How one imported tool is republished: what capnode vouches for, and what the server merely claims. */
export interface RepublishedTool {
  readonly description: string;
  /** Annotations for the host's registry (and so its own MCP clients). */
  readonly commandAnnotations?: CommandAnnotations;
  /** Annotations for a harness: the server's own when trusted, otherwise only a prefixed title. */
  readonly annotations?: Record<string, unknown>;
  /** The server's hints, unverified (set only when the server is not trusted and claimed any). */
  readonly serverClaims?: Record<string, unknown>;
}

function trustedAnnotations(annotations: Record<string, unknown>): CommandAnnotations {
  const out: { -readonly [K in keyof CommandAnnotations]: CommandAnnotations[K] } = {};
  if (typeof annotations.title === 'string') out.title = capText(annotations.title, 200);
  for (const [hint, key] of Object.entries(HINTS)) if (typeof annotations[hint] === 'boolean') out[key] = annotations[hint] as boolean;
  return out;
}

/**
 * Republishes a server's tool annotations. A trusted server (`trusted: true` in its config) keeps
 * its hints. Otherwise `readOnlyHint`, `destructiveHint`, `idempotentHint` and `openWorldHint` are
 * not republished as hints (so clients fall back to MCP's cautious defaults: not read-only,
 * destructive, not idempotent, open world); they are kept as the server's claim in `serverClaims`
 * and named in the description, and the title is prefixed with the server name. Hints never relax
 * capnode's own policy either way: authorization and approval go by names alone.
 */
export function republishTool(server: string, description: string, annotations: Record<string, unknown> | undefined, trusted: boolean): RepublishedTool {
  if (annotations === undefined) return { description };
  if (trusted) return { description, commandAnnotations: trustedAnnotations(annotations), annotations };
  const claims: Record<string, unknown> = {};
  for (const hint of Object.keys(HINTS)) if (typeof annotations[hint] === 'boolean') claims[hint] = annotations[hint];
  const title = typeof annotations.title === 'string' ? capText(`${server}: ${annotations.title}`, 200) : undefined;
  const claimed = Object.entries(claims).map(([hint, value]) => `${hint}=${String(value)}`);
  return {
    description: claimed.length > 0 ? `${description}${description ? '\n\n' : ''}[capnode: hints declared by server '${server}', not verified: ${claimed.join(', ')}]` : description,
    ...(title === undefined ? {} : { commandAnnotations: { title }, annotations: { title } }),
    ...(claimed.length > 0 ? { serverClaims: claims } : {}),
  };
}
