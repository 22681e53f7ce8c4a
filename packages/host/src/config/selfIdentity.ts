import type { SelfHostIdentity } from '@capnode/mcp-client';
import { listRuntimeStates, type HostPaths } from './paths.js';

/** The port of `url`, or undefined when it is not a URL. */
function portOf(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  } catch {
    return undefined;
  }
}

/**
 * How a server entry that is this config directory's capnode host looks, for the self-import
 * check: the configured MCP port, `extraPorts`, and every port a live host of this directory
 * listens on (MCP, admin, dashboard), read each time; its config directory; this process's bin.
 */
export function hostSelfIdentity(paths: HostPaths, configuredPort: () => number, extraPorts: readonly number[] = []): SelfHostIdentity {
  return {
    get ports() {
      const live = listRuntimeStates(paths).flatMap((state) => [portOf(state.url), portOf(state.adminUrl), portOf(state.dashboardUrl)]);
      return [...new Set([configuredPort(), ...extraPorts, ...live].filter((port): port is number => port !== undefined && Number.isInteger(port)))];
    },
    home: paths.home,
    bins: process.argv[1] === undefined ? [] : [process.argv[1]],
  };
}
