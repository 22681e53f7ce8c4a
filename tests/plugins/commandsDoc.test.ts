import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS_DOC_COMMAND, stockCommandsMarkdown } from '@capnode/host/docs';

const committed = fileURLToPath(new URL('../../docs/commands.md', import.meta.url));

describe('docs/commands.md', () => {
  it('is what capnode --list-tools --markdown generates from the stock registry', async () => {
    const generated = await stockCommandsMarkdown();
    const text = readFileSync(committed, 'utf8');
    expect(text === generated, `docs/commands.md drifted from the registry; regenerate it: ${COMMANDS_DOC_COMMAND}`).toBe(true);
  });

  it('documents names, parameters, consent and local-only', async () => {
    const generated = await stockCommandsMarkdown();
    expect(generated).toContain('### `system.run`');
    expect(generated).toContain('| `command` |');
    expect(generated).toMatch(/### `app\.status`[\s\S]*?local-only \(never declared to a gateway\)/);
  });
});
