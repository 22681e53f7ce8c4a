import type { ExecApprovalPolicy } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { SnapshotRequestError, fromExecApprovalsSetParams, policyHash, toExecApprovalsSnapshot } from './execApprovalsSnapshot.js';

const modes = [
  ['deny', 'deny', 'off'],
  ['allowlist', 'allowlist', 'off'],
  ['ask', 'allowlist', 'on-miss'],
  ['full', 'full', 'off'],
] as const;

describe('exec approvals snapshot', () => {
  it.each(modes)('mode %s is security %s / ask %s, and reads back as the same mode', async (mode, security, ask) => {
    const policy: ExecApprovalPolicy = { mode, allowlist: [] };
    const snapshot = (await toExecApprovalsSnapshot(policy)) as { hash: string; file: Record<string, any> };
    expect(snapshot.file.defaults).toEqual({ security, ask, askFallback: 'deny', autoAllowSkills: false });
    expect(await fromExecApprovalsSetParams({ file: snapshot.file, baseHash: snapshot.hash }, policy)).toEqual({ mode, allowlist: [] });
  });

  it('keeps scoped entries by id, reads a new single program as "any arguments", and hashes the policy', async () => {
    const policy: ExecApprovalPolicy = { mode: 'ask', allowlist: ['git status *', { pattern: 'make *', cwd: '/srv/p', env: { A: '1' } }] };
    const snapshot = (await toExecApprovalsSnapshot(policy)) as { hash: string; file: Record<string, any> };
    expect(snapshot.hash).toBe(await policyHash(policy));
    expect(await policyHash({ ...policy, mode: 'full' })).not.toBe(snapshot.hash);
    const file = structuredClone(snapshot.file);
    file.agents['*'].allowlist.push({ pattern: 'uname' }, { pattern: 'ls -la *', lastUsedAt: 1 });
    const next = await fromExecApprovalsSetParams({ file, baseHash: snapshot.hash }, policy);
    expect(next.allowlist).toEqual(['git status *', { pattern: 'make *', cwd: '/srv/p', env: { A: '1' } }, 'uname *', 'ls -la *']);
    // An id with an edited pattern is a new (unscoped) entry, never the old scope with a new pattern.
    file.agents['*'].allowlist[1].pattern = 'make install';
    expect((await fromExecApprovalsSetParams({ file, baseHash: snapshot.hash }, policy)).allowlist[1]).toBe('make install');
  });

  it('refuses what it cannot mean, and a stale or missing base hash', async () => {
    const policy: ExecApprovalPolicy = { mode: 'ask', allowlist: [] };
    const { hash } = (await toExecApprovalsSnapshot(policy)) as { hash: string };
    const refuse = (params: unknown) => expect(fromExecApprovalsSetParams(params, policy)).rejects.toBeInstanceOf(SnapshotRequestError);
    await refuse({ file: { version: 1 } });
    await refuse({ file: { version: 1 }, baseHash: 'stale' });
    await refuse({ file: { version: 2 }, baseHash: hash });
    await refuse({ rules: [], defaultAction: 'allow', baseHash: hash });
    await refuse({ file: { version: 1, defaults: { security: 'full', ask: 'always' } }, baseHash: hash });
    await refuse({ file: { version: 1, defaults: { security: 'sometimes' } }, baseHash: hash });
    await refuse({ file: { version: 1, defaults: { askFallback: 'full' } }, baseHash: hash });
    await refuse({ file: { version: 1, defaults: { autoAllowSkills: true } }, baseHash: hash });
    await refuse({ file: { version: 1, agents: { main: { security: 'full' } } }, baseHash: hash });
    await refuse({ file: { version: 1, agents: { '*': { ask: 'off' } } }, baseHash: hash });
    await refuse({ file: { version: 1, agents: { '*': { allowlist: [{ pattern: '~/bin/*' }] } } }, baseHash: hash });
    await refuse({ file: { version: 1, agents: { '*': { allowlist: [{ pattern: 'git', argPattern: 'status' }] } } }, baseHash: hash });
    await refuse({ file: { version: 1, agents: { '*': { allowlist: [{ pattern: ' ' }] } } }, baseHash: hash });
    // An empty per-agent list is harmless.
    await expect(fromExecApprovalsSetParams({ file: { version: 1, agents: { main: { allowlist: [] } } }, baseHash: hash }, policy)).resolves.toEqual({ mode: 'ask', allowlist: [] });
  });
});
