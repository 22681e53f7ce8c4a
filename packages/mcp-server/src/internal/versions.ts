import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/** The protocol revisions of the per-request (2026-07-28) lifecycle the MCP SDK 2.4 implements. */
const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** Every protocol revision served: the initialize-based ones, then the per-request lifecycle. */
export const supportedProtocolVersions: readonly string[] = [...SUPPORTED_PROTOCOL_VERSIONS, ...MODERN_PROTOCOL_VERSIONS];
