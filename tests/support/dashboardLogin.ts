import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Host } from '@capnode/host';

/** The admin token of a test host's config directory (`admin-token`). */
export function adminToken(home: string): string {
  return readFileSync(join(home, 'admin-token'), 'utf8').trim();
}

/**
 * A fresh one-time dashboard login URL, asked for the way `capnode ui` asks: `POST /_capnode/ui/login`
 * on the host's admin routes (on the MCP listener, or their own when MCP is off) with the admin bearer
 * token of `home`, the host's config directory.
 */
export async function mintLoginUrl(host: Host, home: string): Promise<string> {
  const status = host.status();
  const adminBase = status.admin?.url ?? new URL('/_capnode/', status.mcp.url!).href;
  const response = await fetch(new URL('ui/login', adminBase), { method: 'POST', headers: { authorization: `Bearer ${adminToken(home)}` } });
  if (response.status !== 200) throw new Error(`POST /_capnode/ui/login answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { url: string }).url;
}
