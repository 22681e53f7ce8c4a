import { z } from 'zod';
import { json } from '../content.js';
import { defineCommand, type CommandDefinition } from '../contract.js';
import { findExecutable } from '../internal/which.js';
import type { BuiltinOptions } from './options.js';

/** `system.which`: finds programs on PATH (PATHEXT on Windows) without running a shell. */
export function createSystemWhichCommand(options: BuiltinOptions = {}): CommandDefinition {
  return defineCommand({
    name: 'system.which',
    description: 'Finds programs on this machine\'s PATH, like `which`. Returns the absolute path of each program found and lists the missing ones.',
    annotations: { title: 'Find programs', readOnly: true, idempotent: true },
    input: z.object({
      bins: z.array(z.string().min(1).max(1024)).min(1).max(100).describe('Program names, e.g. ["git", "node"].'),
    }),
    async execute({ bins }) {
      const env = options.env ?? process.env;
      const found: Record<string, string> = {};
      const missing: string[] = [];
      for (const bin of bins) {
        const resolved = await findExecutable(bin, { env });
        if (resolved === undefined) missing.push(bin);
        else found[bin] = resolved;
      }
      return json({ found, missing });
    },
  });
}
