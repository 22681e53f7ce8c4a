import type { ApprovalBroker } from '@capnode/capabilities';
import type { HostPaths } from '../../config/paths.js';
import type { SettingsStore } from '../../config/settings.js';
import type { SettingsPatchResult } from '../../config/settingsPatch.js';
import type { HostStatus } from '../../status/hostStatus.js';
import type { GatewayConnectionConfig } from '../gateway/gatewayMode.js';

/**
 * What the local-only `app.*` commands read and drive of their host, handed over by `createHost`:
 * the same operations the dashboard and the admin routes use, never copies of them.
 */
export interface AppPorts {
  readonly paths: HostPaths;
  readonly settings: SettingsStore;
  readonly approvals: ApprovalBroker;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  status(): HostStatus;
  /** Validates and writes a partial settings change, then applies what can be applied live. */
  patchSettings(patch: unknown): Promise<SettingsPatchResult>;
  /** Setting paths changed since this host started that take effect only after a restart. */
  restartNeeded(): readonly string[];
  /** Drops the gateway node's connection and connects again; false when no gateway node is configured. */
  reconnectGateway(): Promise<boolean>;
  /** The gateway this host pairs with (the running node's, else the configured one), token included, or undefined without a gateway URL. */
  gatewayConfig(): GatewayConnectionConfig | undefined;
  /** Every secret value the host knows (tokens, gateway token, imported servers' env and header values): scrubbed from every `app.*` output. */
  secrets(): readonly (string | undefined)[];
}
