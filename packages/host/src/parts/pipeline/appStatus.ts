import { defineCapability, defineCommand, json, type Capability } from '@capnode/capabilities';

/**
 * The local-only `app` capability: `app.status` reports the host's real state (listener URL and
 * state, startup error, token file path, capability count, uptime, node mode). Never the token.
 */
export function createAppCapability(status: () => object): Capability {
  return defineCapability({
    category: 'app',
    commands: [
      defineCommand({
        name: 'app.status',
        description:
          'Status of this capnode host: MCP listener URL and state (with the startup error, if any), token file path, number of tools, uptime, exec approval mode and pending approvals, gateway node mode.',
        annotations: { title: 'Host status', readOnly: true, idempotent: true },
        localOnly: true,
        execute: () => json({ ...status() }),
      }),
    ],
  });
}
