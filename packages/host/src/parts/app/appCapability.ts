import { CapabilityError, defineCapability, z, type Capability } from '@capnode/capabilities';
import { pendingViews } from '../dashboard/routes/approvals.js';
import { serversView } from '../dashboard/routes/servers.js';
import { createAppConnectionCommands } from './appConnection.js';
import { defineAppCommand } from './appCommand.js';
import type { AppPorts } from './appPorts.js';
import { createAppSettingsCommands } from './appSettings.js';

export type { AppPorts } from './appPorts.js';

const noArgs = z.object({}).strict();

/**
 * The local-only `app` capability: this host's own state and settings for the clients of this
 * machine (the tray's `app.*` automation). Every command is `localOnly` (never declared to a gateway,
 * never in the OpenAgent catalog), refuses any other transport, runs through the one pipeline, and
 * reports secrets as presence only. Answering approvals stays with the person: `app.approvals.list`
 * reads, and what changes settings or pairing asks first.
 */
export function createAppCapability(ports: AppPorts): Capability {
  return defineCapability({
    category: 'app',
    commands: [
      defineAppCommand(ports, {
        name: 'app.status',
        description:
          'Status of this capnode host: MCP listener URL and state (with the startup error, if any), token file path, number of tools, uptime, exec approval mode and pending approvals, gateway node mode.',
        annotations: { title: 'Host status', readOnly: true, idempotent: true },
        run: () => ({ ...ports.status() }),
      }),
      ...createAppSettingsCommands(ports),
      defineAppCommand(ports, {
        name: 'app.approvals.list',
        description:
          "Read-only: the approval requests waiting for the person's answer (command, summary, transport, caller, times) and those allowed and waiting for the agent's retry. Answering stays with the person (dashboard Approvals page, tray, capnode approvals allow|deny <id>).",
        annotations: { title: 'Pending approvals', readOnly: true, idempotent: true },
        input: noArgs,
        run: () => {
          const { pending, allowed } = pendingViews(ports.approvals);
          // The hash an answer is bound to is for whoever answers, not for the agent.
          return { pending: pending.map(({ argsHash: _hash, ...view }) => view), allowed: [...allowed] };
        },
      }),
      defineAppCommand(ports, {
        name: 'app.dashboard.url',
        description: "The web dashboard's URL while it listens (sign-in stays with the person: capnode ui opens it signed in). Never a sign-in code or login link.",
        annotations: { title: 'Dashboard URL', readOnly: true, idempotent: true },
        input: noArgs,
        run: () => {
          const { state, url } = ports.status().dashboard;
          if (url === undefined) throw new CapabilityError('unavailable', `The dashboard is not listening (state ${state}); dashboard.enabled in settings turns it on.`);
          return { url, state };
        },
      }),
      defineAppCommand(ports, {
        name: 'app.plugins.list',
        description: 'Every plugin of this host (the capability pack, settings.json plugins, dev plugins): loaded or failed with the reason, its commands, and those unavailable here with what to install.',
        annotations: { title: 'Plugins', readOnly: true, idempotent: true },
        input: noArgs,
        run: () => ({ plugins: [...ports.status().plugins] }),
      }),
      defineAppCommand(ports, {
        name: 'app.servers.list',
        description: "The MCP servers this host imports tools from: each one's configuration (env and header values masked), enabled or not, its live diagnostic (state, transport, tools, last error), and the tool policy (excluded, auto-approved, always-ask tools).",
        annotations: { title: 'Imported MCP servers', readOnly: true, idempotent: true },
        input: noArgs,
        run: () => ({ ...serversView(ports.settings.reload(), ports.status().mcpClient, ports.restartNeeded()) }),
      }),
      ...createAppConnectionCommands(ports),
    ],
  });
}
