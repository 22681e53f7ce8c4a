import type { Invoker } from '@capnode/capabilities';
import type { HelloOk } from '@capnode/protocol/gateway';
import type { BackoffOptions } from '../connection/backoff.js';
import type { GatewayClient, GatewayClientStatus, GatewayDeclaration, GatewayLogLevel } from '../connection/clientContract.js';
import type { DeviceIdentity, DeviceTokenStore } from '../connection/identity.js';
import type { InvokeLedgerStats } from './invokeLedger.js';
import type { PluginSurfaceOptions } from './pluginSurfaces.js';
import type { GatewaySocketFactory } from '../connection/socket.js';

/** Where the gateway stands on this node: device pairing, then approval of its declared commands. */
export type GatewayNodePairingState =
  /** Connected; the gateway has not said whether the declared commands are approved. */
  | 'unknown'
  /** The gateway waits for its owner to approve this device (connect refused with PAIRING_REQUIRED). */
  | 'device-pending'
  /** The declared commands wait for approval (`node.pair.approve`). */
  | 'commands-pending'
  | 'approved'
  | 'rejected';

/** Tells the user the gateway owner must approve something, with the request id to approve. */
export interface GatewayNodePairingRequest {
  readonly kind: 'device' | 'commands';
  readonly requestId?: string;
  /** Commands waiting for approval (kind `commands`). */
  readonly commands?: readonly string[];
  /** One actionable line for the user. */
  readonly message: string;
}

/** What {@link GatewayNodeTransportOptions.inspectPairing} reports for this node. */
export interface GatewayNodePairingInspection {
  readonly state: 'pending' | 'approved' | 'unknown';
  readonly requestId?: string;
  readonly commands?: readonly string[];
}

export interface GatewayNodeStatus {
  readonly nodeId: string;
  readonly connection: GatewayClientStatus;
  /** What the current (or last) connect declared. */
  readonly declared: GatewayDeclaration;
  readonly pairing: { readonly state: GatewayNodePairingState; readonly requestId?: string; readonly commands?: readonly string[] };
  readonly invocations: InvokeLedgerStats;
}

export interface GatewayNodeTransportOptions {
  readonly url: string;
  /** The gateway's shared token. */
  readonly token?: string;
  readonly password?: string;
  /** The invocation pipeline every transport shares (approvals, policy, audit); its registry is declared. */
  readonly invoker: Invoker;
  readonly identity: DeviceIdentity;
  readonly deviceTokens?: DeviceTokenStore;
  readonly createSocket: GatewaySocketFactory;
  /** How the node describes itself; `platform` must be `linux`, `macos` or `windows` for the gateway's command policy. */
  readonly client: {
    readonly version: string;
    readonly platform: string;
    readonly deviceFamily?: string;
    readonly displayName?: string;
    readonly instanceId?: string;
  };
  /** Most invokes running at once; more get "node busy, retry". Default 8. */
  readonly maxConcurrent?: number;
  /** How long a finished invoke is replayed for a repeated idempotency key. Default 10 minutes. */
  readonly rememberMs?: number;
  /** Registry changes within this window are declared together. Default 200 ms. */
  readonly declarationDebounceMs?: number;
  /** How long a redeclaration waits for running invokes before it reconnects anyway. Default 30 s. */
  readonly redeclareDrainMs?: number;
  /**
   * Looks up this node's pending approval through an operator connection (node roles cannot), so the
   * request id can be surfaced; `@capnode/gateway-bridge/node` provides one.
   */
  readonly inspectPairing?: (nodeId: string, options: { readonly signal: AbortSignal }) => Promise<GatewayNodePairingInspection>;
  /**
   * What this gateway node publishes after each connect: imported MCP tools (node-hosted MCP tools,
   * called back through `mcp.tools.call.v1`) and skills. With it the node declares
   * `mcp.tools.call.v1` at pairing, so publishing more tools later needs no new approval.
   */
  readonly publications?: GatewayNodePublications;
  readonly onPairingRequired?: (request: GatewayNodePairingRequest) => void;
  readonly onStatus?: (status: GatewayNodeStatus) => void;
  readonly onLog?: (level: GatewayLogLevel, message: string) => void;
  readonly requestTimeoutMs?: number;
  readonly handshakeTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  readonly random?: () => number;
  /** Aborting closes the node. */
  readonly signal?: AbortSignal;
}

/** This machine as an OpenClaw node: serves gateway invokes through the shared invocation pipeline. */
export interface GatewayNode {
  /** The gateway's id for this node (the device id). */
  readonly nodeId: string;
  readonly client: GatewayClient;
  status(): GatewayNodeStatus;
  /** Resolves once connected (see `GatewayClient.ready`). */
  ready(options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<HelloOk>;
  /**
   * The gateway's hosted plugin surface URL for this connection (`pluginSurfaceUrls[surface]` of its
   * `hello-ok`, or the last `node.pluginSurface.refresh` answer), e.g. `canvas` →
   * `http://gw:18789/__openclaw__/cap/<token>`; `undefined` while not connected or when the gateway issued none.
   */
  pluginSurfaceUrl(surface: string): string | undefined;
  /**
   * Like {@link pluginSurfaceUrl}, but first refreshes the URL's capability through
   * `node.pluginSurface.refresh` when it is near its expiry (or `force`). Never rejects for a failed
   * refresh (it keeps the current URL); rejects only when `signal` aborts.
   */
  freshPluginSurfaceUrl(surface: string, options?: PluginSurfaceOptions): Promise<string | undefined>;
  /** Aborts running invokes, closes the connection. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * An MCP tool this machine imports, offered to the gateway's agents as a node-hosted MCP tool. The
 * gateway node chooses the agent-visible name (see `publishedToolNames`); a call comes back as
 * `mcp.tools.call.v1 { server, tool, arguments }` and runs `command` through the pipeline.
 */
export interface GatewayNodeMcpTool {
  readonly server: string;
  readonly tool: string;
  /** The registry command that runs it (the imported tool's exposed name, `localOnly`). */
  readonly command: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters?: Readonly<Record<string, unknown>>;
}

/** A skill published to the gateway (`name` must equal the `name` in the SKILL.md frontmatter). */
export interface GatewayNodeSkill {
  /** `^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`, also the skill's directory name. */
  readonly name: string;
  /** Equal to the frontmatter `description`, 1–1024 characters. */
  readonly description: string;
  /** The whole SKILL.md, at most 64 KiB. */
  readonly content: string;
}

/** The source of what a gateway node publishes; read after each connect and after each `subscribe` call-back. */
export interface GatewayNodePublications {
  mcpTools(): readonly GatewayNodeMcpTool[];
  skills(): readonly GatewayNodeSkill[];
  /** Calls `listener` when either list changed; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}
