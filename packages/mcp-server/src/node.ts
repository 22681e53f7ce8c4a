export type { AdminHandler, HttpLogLevel, HttpServerOptions, McpHttpServer, NamedToken } from './httpServer.js';
export { startHttpServer } from './httpServer.js';
export type { InsecureTokenFileError } from './token.js';
export { generateToken, loadOrCreateToken, rotateToken, isInsecureTokenFileError } from './token.js';
export { limitYoungGenerationGrowth } from './gcTuning.js';
