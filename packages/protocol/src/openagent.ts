/**
 * OpenAgent's capability WebSocket (`client-capabilities/1`) as the desktop client speaks it: frame
 * types, the server-frame validator, call admission in the client's order, classification and
 * deadlines. Runtime-neutral (no Node built-ins); the `arguments_sha256` hash is
 * `openAgentArgumentsSha256` in `@capnode/protocol/node`.
 */
export type {
  OpenAgentClassification,
  OpenAgentCatalogTool,
  OpenAgentCatalogServer,
  OpenAgentHello,
  OpenAgentError,
  OpenAgentClientFrame,
  OpenAgentHelloAck,
  OpenAgentToolCall,
  OpenAgentServerFrame,
  OpenAgentFrameErrorCode,
  OpenAgentFrameParse,
} from './openAgentFrames.js';
export {
  OPENAGENT_PROTOCOL,
  OPENAGENT_MAX_ACTIVE_CALLS,
  OPENAGENT_CLOSE_CONNECTION_REPLACED,
  OPENAGENT_CLOSE_POLICY,
  parseOpenAgentServerFrame,
  classifyOpenAgentCall,
  openAgentDeadline,
} from './openAgentFrames.js';
export type { OpenAgentAdmissionCode, OpenAgentAdmissionState, OpenAgentRefusal } from './openAgentAdmission.js';
export { admitOpenAgentCall } from './openAgentAdmission.js';
export { openAgentCanonicalJson } from './openAgentCanonical.js';
