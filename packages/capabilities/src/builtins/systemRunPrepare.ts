import os from 'node:os';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCommand, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { describeExecArgs } from '../execApprovalHook.js';
import { execPolicyForMode, parseExecApprovalPolicy, type ExecApprovalStore } from '../execPolicy.js';
import type { BuiltinOptions } from './options.js';
import { resolveWorkingDirectory } from './systemRun.js';

/** Options of {@link createSystemRunPrepareCommand}. */
export interface SystemRunPrepareOptions extends BuiltinOptions {
  /** The exec approval policy `system.run` is gated by; reported as `execPolicy`. Without it, none is reported. */
  readonly store?: ExecApprovalStore;
}

const optionalText = (max: number) => z.string().max(max).nullable().optional();

const prepareInput = z.object({
  command: z.array(z.string().max(131_072)).min(1).max(4096).describe('argv to run (no shell of its own; a shell runs only as argv, e.g. ["/bin/sh", "-lc", "…"]).'),
  rawCommand: optionalText(262_144).describe('The command as the agent wrote it; shown as the preview.'),
  cwd: optionalText(4096).describe("Working directory (absolute, or relative to the user's home); must exist. Default: the user's home directory."),
  env: z.record(z.string(), z.string()).optional().describe('Variables the run will set; checked as system.run checks them.'),
  security: optionalText(32).describe("The caller's own exec security ('deny' | 'allowlist' | 'full'); informational, this machine's policy decides."),
  ask: optionalText(32).describe("The caller's own ask mode ('off' | 'on-miss' | 'always'); informational."),
  strictInlineEval: z.boolean().nullable().optional(),
  agentId: optionalText(256),
  sessionKey: optionalText(1024),
});

/**
 * `system.run.prepare`: the first half of OpenClaw's node exec (`exec host=node`). It checks the
 * command (argv, cwd, env) without running or asking anything and returns the plan `system.run`
 * then runs exactly: `{ plan: { argv, cwd? (real path, when the call gave one), commandText, commandPreview?, agentId?,
 * sessionKey? }, execPolicy: { security, ask } (this machine's mode), allowAlwaysCoverage }`.
 *
 * `allowAlwaysCoverage` is always `{ complete: false, patterns: [] }`: an "allow always" given at the
 * gateway is never recorded here (capnode's own approval records its own exact entry), so the gateway
 * must not count on one.
 */
export function createSystemRunPrepareCommand(options: SystemRunPrepareOptions = {}): CommandDefinition {
  return defineCommand({
    name: 'system.run.prepare',
    description:
      'Checks a command for system.run without running it and returns the plan (argv, real cwd, command text) that system.run then runs exactly, with this machine\'s exec policy. Used by OpenClaw gateways before system.run.',
    annotations: { title: 'Prepare a command run', readOnly: true, idempotent: true },
    input: prepareInput,
    async execute(args) {
      const exec = describeExecArgs({ command: args.command, ...(args.cwd ? { cwd: args.cwd } : {}), ...(args.env ? { env: args.env } : {}) });
      if (exec.target.shell) throw new CapabilityError('invalid_arguments', 'system.run.prepare takes an argv array.');
      // A call without cwd stays without one (it runs in the default directory): allowlist entries
      // without a cwd scope cover exactly those calls.
      const cwd = exec.cwd === undefined ? undefined : await resolveWorkingDirectory(exec.cwd, options.defaultCwd ?? os.homedir());
      const rawCommand = args.rawCommand?.trim();
      const plan = {
        argv: [...exec.target.argv],
        ...(cwd === undefined ? {} : { cwd }),
        commandText: exec.commandLine,
        ...(rawCommand && rawCommand !== exec.commandLine ? { commandPreview: rawCommand } : {}),
        ...(args.agentId ? { agentId: args.agentId } : {}),
        ...(args.sessionKey ? { sessionKey: args.sessionKey } : {}),
      };
      let execPolicy: ReturnType<typeof execPolicyForMode> | undefined;
      if (options.store) {
        try {
          execPolicy = execPolicyForMode(parseExecApprovalPolicy(await options.store.get()).mode);
        } catch (error) {
          throw new CapabilityError('denied', 'Exec approvals could not be read, so no command can be prepared until they can.', { cause: error });
        }
      }
      return json({ plan, ...(execPolicy ? { execPolicy } : {}), allowAlwaysCoverage: { complete: false, patterns: [] } });
    },
  });
}
