import { describe, expect, it } from 'vitest';
import type { SettingsPatchResult } from '../config/settingsPatch.js';
import { auditedSettingsPatch, auditedTokenRotation, type ControlAudit } from './controlAudit.js';

function recorder() {
  const entries: Parameters<ControlAudit>[0][] = [];
  return { entries, audit: ((entry) => entries.push(entry)) satisfies ControlAudit };
}

const ok = (changed: string[]): SettingsPatchResult => ({ ok: true, settings: {}, changed, applied: [], restartNeeded: [] });

describe('control audit', () => {
  it('records the changed paths of a settings change, nothing for a change that changed nothing', async () => {
    const { entries, audit } = recorder();
    await auditedSettingsPatch(async () => ok(['execApprovals.mode', 'mcpClient.servers']), { execApprovals: { mode: 'full' } }, audit);
    await auditedSettingsPatch(async () => ok([]), {}, audit);
    expect(entries).toEqual([{ command: 'capnode.settings', changed: ['execApprovals.mode', 'mcpClient.servers'], durationMs: expect.any(Number) }]);
  });

  it('records a refused change with the refused paths, and one that throws as failed (rethrown)', async () => {
    const { entries, audit } = recorder();
    const refused = await auditedSettingsPatch(async () => ({ ok: false, message: 'bad', fields: [{ path: 'mcp.port', message: 'too big' }] }), { mcp: { port: 1e9 } }, audit);
    expect(refused.ok).toBe(false);
    await expect(auditedSettingsPatch(() => Promise.reject(new Error('disk full')), {}, audit)).rejects.toThrow('disk full');
    expect(entries).toEqual([
      { command: 'capnode.settings', outcome: 'invalid_settings', changed: ['mcp.port'], durationMs: expect.any(Number) },
      { command: 'capnode.settings', outcome: 'failed', durationMs: expect.any(Number) },
    ]);
  });

  it('records a token rotation only once it succeeded', async () => {
    const { entries, audit } = recorder();
    await auditedTokenRotation(async () => {}, audit);
    await expect(auditedTokenRotation(() => Promise.reject(new Error('EACCES')), audit)).rejects.toThrow('EACCES');
    expect(entries).toEqual([{ command: 'capnode.token.rotate', durationMs: expect.any(Number) }]);
  });
});
