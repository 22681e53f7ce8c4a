import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Settings } from '../config/settings.js';
import { createHost } from '../host/host.js';
import { formatSkillMarkdown } from '../skill/skillMarkdown.js';

export { SKILL_DESCRIPTION, SKILL_DOC_COMMAND, SKILL_NAME, formatSkillMarkdown } from '../skill/skillMarkdown.js';

/**
 * The stock host's skill without a running host (the pack, no user plugins) under `settings`
 * (default: the defaults, what docs/SKILL.md holds), as `capnode skill` prints it offline.
 */
export async function stockSkillMarkdown(settings?: Settings): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'capnode-skill-'));
  const host = createHost({ home, env: {}, plugins: false, probeAvailability: false, onLog: () => {} });
  try {
    await host.pluginsReady();
    return formatSkillMarkdown(host.registry.commands(), settings ?? host.settings.get());
  } finally {
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}
