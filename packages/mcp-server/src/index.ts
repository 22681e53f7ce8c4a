export type { CapnodeMcp, CapnodeMcpOptions, CreateServerOptions, McpFetchOptions } from './capnodeMcp.js';
export { createCapnodeMcp, supportedProtocolVersions } from './capnodeMcp.js';
export type { ToolFailureMeta } from './tools.js';
export { FAILURE_META_KEY, toMcpTool, toCallToolResult, toolFailureCode } from './tools.js';
