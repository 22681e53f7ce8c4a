import {
  describeExecArgs,
  evaluateExecPolicy,
  isCapabilityError,
  toAllowlistScope,
  type ExecAllowlistEntry,
  type ExecApprovalPolicy,
  type ExecTarget,
  type ExecVerdict,
} from '@capnode/capabilities';
import { createNodeExecResolvers } from '@capnode/capabilities/node';
import type { ExecTestResult } from '../apiTypes.js';
import { apiError, json, readJsonBody } from '../reply.js';
import type { Route } from '../types.js';

/** Why the policy decided as it did, in a sentence for the page. */
function explain(verdict: ExecVerdict): string {
  if (verdict.verdict === 'allow') return verdict.reason === 'full' ? "allowed: exec approvals are in mode 'full'" : `allowed by the allowlist entry ${verdict.pattern ?? ''}`.trim();
  if (verdict.verdict === 'ask') return verdict.codeLoadingEnv ? `asks: it sets ${verdict.codeLoadingEnv.join(', ')}, which can make programs run other code` : 'asks: no allowlist entry covers it, so you would be asked';
  switch (verdict.reason) {
    case 'deny':
      return "refused: exec approvals are in mode 'deny'";
    case 'shell':
      return 'refused: shell command lines are never allowlisted';
    case 'code_env':
      return `refused: it sets ${verdict.codeLoadingEnv?.join(', ')} and no allowlist entry records that exact value`;
    default:
      return "refused: no allowlist entry covers it (mode 'allowlist' never asks)";
  }
}

/**
 * The verdict the exec approval hook would reach for `system.run` with these arguments, now: the
 * program resolved as system.run resolves it, the cwd as its real path, scoped entries resolved
 * the same way. Nothing runs and nobody is asked.
 */
async function testExec(args: Record<string, unknown>, policy: ExecApprovalPolicy): Promise<ExecTestResult> {
  const resolvers = createNodeExecResolvers();
  const exec = describeExecArgs(args);
  const realCwd = exec.cwd === undefined ? undefined : await resolvers.resolveCwd(exec.cwd);
  let target: ExecTarget = { ...exec.target, ...(realCwd === undefined ? {} : { cwd: realCwd }), ...(exec.env ? { env: exec.env } : {}) };
  if (!target.shell) {
    const resolvedPath = await resolvers.resolveExecutable(target.argv[0]!, { cwd: realCwd ?? resolvers.defaultCwd });
    if (resolvedPath !== undefined) target = { ...target, resolvedPath };
  }
  const allowlist: ExecAllowlistEntry[] = [];
  for (const entry of policy.allowlist) {
    const scope = toAllowlistScope(entry);
    if (scope.cwd === undefined) allowlist.push(entry);
    else if (target.cwd !== undefined) {
      try {
        allowlist.push({ ...scope, cwd: await resolvers.resolveCwd(scope.cwd) });
      } catch {
        // A scope that no longer exists covers nothing.
      }
    }
  }
  const verdict = evaluateExecPolicy({ mode: policy.mode, allowlist }, target);
  return { decision: verdict.verdict, reason: explain(verdict), ...(target.resolvedPath ? { resolvedPath: target.resolvedPath } : {}) };
}

/** `POST /api/exec/test` `{ command, cwd?, env?, shell? }` → `{ decision: 'allow' | 'ask' | 'deny', reason }`. */
export const execRoutes: readonly Route[] = [
  [
    'POST',
    '/api/exec/test',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      try {
        return json(200, await testExec(body, host.settings.reload().execApprovals));
      } catch (error) {
        if (isCapabilityError(error)) return apiError(400, 'invalid', error.message, [{ path: 'command', message: error.message }]);
        throw error;
      }
    },
  ],
];
