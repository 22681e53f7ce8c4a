import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CapabilityError, z, type CommandContext, type CommandDefinition } from '@capnode/capabilities';
import { isHostError } from '../../errors.js';
import { GATEWAY_TOKEN_ENV } from '../../config/paths.js';
import { GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE, type GatewayConnectionConfig } from '../gateway/gatewayMode.js';
import { approveGatewayPairing, rejectGatewayPairing } from '../gateway/gatewayPairing.js';
import { gatewayView } from '../dashboard/routes/gateway.js';
import { askAppApproval, defineAppCommand } from './appCommand.js';
import type { AppPorts } from './appPorts.js';

const noArgs = z.object({}).strict();

/** The gateway to pair with, or the `unavailable` failure that says how to configure one. */
function pairingConfig(ports: AppPorts): GatewayConnectionConfig {
  const config = ports.gatewayConfig();
  if (!config) throw new CapabilityError('unavailable', 'No gateway is configured: set gateway.url (app.settings.set or the dashboard) first.');
  return config;
}

/** A pairing helper's HostError as the failure a client reads (the message names the fix). */
function pairingFailure(error: unknown): never {
  if (!isHostError(error)) throw error;
  switch (error.code) {
    case 'aborted':
      throw new CapabilityError('cancelled', error.message);
    case 'pairing_failed':
      throw new CapabilityError('failed', error.message);
    default:
      throw new CapabilityError('unavailable', error.message);
  }
}

/** This machine's gateway node pairing as the host knows it (no gateway round trip). */
function pairingView(ports: AppPorts): Record<string, unknown> {
  const node = ports.status().node;
  return {
    gateway: node.url ?? null,
    nodeId: node.nodeId ?? null,
    connection: node.state,
    pairing: node.pairing ?? null,
    detail: node.detail,
  };
}

async function approvePairing(ports: AppPorts, context: CommandContext): Promise<Record<string, unknown>> {
  const config = pairingConfig(ports);
  const pairing = ports.status().node.pairing;
  const commands = pairing?.commands?.length ? ` (commands: ${pairing.commands.join(', ')})` : '';
  const summary = `approve this machine's gateway node pairing on ${config.url}${commands}`;
  await askAppApproval(ports, context, {
    command: 'app.pairing.approve',
    summary,
    boundTo: { url: config.url, requestId: pairing?.requestId ?? null, commands: pairing?.commands ?? [] },
  });
  try {
    const result = await approveGatewayPairing({ home: ports.paths.home, ...config, version: ports.version, signal: context.signal });
    return { ...result };
  } catch (error) {
    return pairingFailure(error);
  }
}

/** `app.connection.*` and `app.pairing.*`: the gateway node's connection and pairing. */
export function createAppConnectionCommands(ports: AppPorts): CommandDefinition[] {
  return [
    defineAppCommand(ports, {
      name: 'app.connection.status',
      description:
        "Read-only connection snapshot: the gateway node (state, gateway URL, node id, pairing, last error, next retry), the OpenAgent channel, the MCP listener and stdio, the dashboard, pending approvals, and connection settings that wait for a restart. Prefer it over app.status for connection troubleshooting. Never a token.",
      annotations: { title: 'Connection status', readOnly: true, idempotent: true },
      input: noArgs,
      run: () => {
        const status = ports.status();
        return {
          gateway: status.node,
          openagent: status.openagent,
          mcp: status.mcp,
          stdio: status.stdio,
          dashboard: { state: status.dashboard.state, ...(status.dashboard.url ? { url: status.dashboard.url } : {}) },
          pendingApprovals: ports.approvals.list().length,
          restartNeeded: ports.restartNeeded().filter((path) => path.startsWith('gateway.') || path.startsWith('openagent.') || path.startsWith('mcp.')),
        };
      },
    }),
    defineAppCommand(ports, {
      name: 'app.connection.gateways',
      description: 'The gateway this host is configured for (and the one this run connects to), with credential presence as booleans only (token in settings, token from the environment, node and operator identities). Never a token value.',
      annotations: { title: 'Saved gateways', readOnly: true, idempotent: true },
      input: noArgs,
      run: () => {
        const settings = ports.settings.reload();
        const status = ports.status();
        const view = gatewayView(settings, status.node, ports.restartNeeded());
        const credentials = {
          hasNodeIdentity: existsSync(join(ports.paths.home, GATEWAY_NODE_IDENTITY_FILE)),
          hasOperatorIdentity: existsSync(join(ports.paths.home, OPERATOR_IDENTITY_FILE)),
          tokenFromEnv: Boolean(ports.env[GATEWAY_TOKEN_ENV]),
        };
        const gateways: Record<string, unknown>[] = [];
        if (view.configured.url !== undefined) {
          gateways.push({ source: 'settings', url: view.configured.url, enabled: view.configured.enabled, active: status.node.url === view.configured.url, hasToken: view.configured.hasToken, ...credentials });
        }
        if (status.node.url !== undefined && status.node.url !== view.configured.url) {
          gateways.push({ source: 'run', url: status.node.url, enabled: status.node.enabled, active: true, hasToken: ports.gatewayConfig()?.token !== undefined, ...credentials });
        }
        return { gateways, node: { state: view.node.state, detail: view.node.detail }, restartNeeded: [...view.restartNeeded] };
      },
    }),
    defineAppCommand(ports, {
      name: 'app.connection.reconnect',
      description: "Drops the gateway node's connection and connects again with the gateway it is configured for (after the gateway restarted, or a pairing was approved). Fails with 'unavailable' when no gateway node runs here.",
      annotations: { title: 'Reconnect the gateway node', idempotent: true },
      input: noArgs,
      async run() {
        if (!(await ports.reconnectGateway())) throw new CapabilityError('unavailable', 'No gateway node runs on this host: turn it on with gateway.enabled and gateway.url (app.settings.set), or capnode serve --gateway <url>.');
        return { reconnecting: true, gateway: ports.status().node };
      },
    }),
    defineAppCommand(ports, {
      name: 'app.pairing.list',
      description: "This machine's gateway node pairing as the host knows it: the gateway, the node id, the connection state, and the pairing state with the pending request and its commands.",
      annotations: { title: 'Gateway pairing', readOnly: true, idempotent: true },
      input: noArgs,
      run: () => pairingView(ports),
    }),
    defineAppCommand(ports, {
      name: 'app.pairing.approve',
      description:
        "Approves this machine's pending gateway node pairing on the gateway (as capnode gateway pair does; needs operator rights there). The person is asked first through the approval queue; with wait mode 'return' the call returns approval_pending and the identical retry runs once allowed.",
      annotations: { title: 'Approve gateway pairing', idempotent: true, openWorld: true },
      input: noArgs,
      run: (_args, context) => approvePairing(ports, context),
    }),
    defineAppCommand(ports, {
      name: 'app.pairing.reject',
      description: "Rejects this machine's pending gateway node pairing requests on the gateway (node.pair.reject; needs operator rights there). The gateway node then stays without approved commands.",
      annotations: { title: 'Reject gateway pairing', destructive: true, idempotent: true, openWorld: true },
      input: noArgs,
      async run(_args, context) {
        const config = pairingConfig(ports);
        try {
          return { ...(await rejectGatewayPairing({ home: ports.paths.home, ...config, version: ports.version, signal: context.signal })) };
        } catch (error) {
          return pairingFailure(error);
        }
      },
    }),
  ];
}
