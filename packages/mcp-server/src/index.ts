export type { CapnodeMcp, CapnodeMcpOptions, CreateServerOptions, McpFetchOptions } from './capnodeMcp.js';
export { createCapnodeMcp, supportedProtocolVersions } from './capnodeMcp.js';
export { toMcpTool, toCallToolResult } from './tools.js';
