import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SKILL_DESCRIPTION, SKILL_DOC_COMMAND, SKILL_NAME, stockSkillMarkdown } from '@capnode/host/docs';
import { defaultSettings } from '@capnode/host/settings';

const committed = fileURLToPath(new URL('../../docs/SKILL.md', import.meta.url));

describe('docs/SKILL.md', () => {
  it('is what capnode skill generates from the stock registry and default settings', async () => {
    const generated = await stockSkillMarkdown();
    const text = readFileSync(committed, 'utf8');
    expect(text === generated, `docs/SKILL.md drifted from the registry; regenerate it: ${SKILL_DOC_COMMAND}`).toBe(true);
  });

  it('has the frontmatter a gateway accepts, names every command, and follows the settings', async () => {
    const generated = await stockSkillMarkdown();
    expect(generated.startsWith(`---\nname: ${SKILL_NAME}\ndescription: ${SKILL_DESCRIPTION}\n---\n`)).toBe(true);
    expect(SKILL_NAME).toMatch(/^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/);
    expect(SKILL_DESCRIPTION.length).toBeLessThanOrEqual(1024);
    expect(new TextEncoder().encode(generated).length).toBeLessThanOrEqual(65_536);
    expect(generated).toContain('| `system.run` |');
    expect(generated).toContain('approval_pending');
    expect(generated).toMatch(/\| `app\.status` \|.*\| local only \|/);
    const settings = defaultSettings();
    const custom = await stockSkillMarkdown({ ...settings, consent: { ...settings.consent, screen: 'allow' }, approvals: { ...settings.approvals, wait: 'return' }, gateway: { ...settings.gateway, publishServers: ['everything'] } });
    expect(custom).toContain('`screen` allow');
    expect(custom).toContain('`approvals.wait` is `return`');
    expect(custom).toContain('Published servers: `everything`.');
  });
});
