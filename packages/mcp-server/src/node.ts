export type { AdminHandler, HttpLogLevel, HttpServerOptions, McpHttpServer } from './httpServer.js';
export { startHttpServer } from './httpServer.js';
export { generateToken, loadOrCreateToken, rotateToken } from './token.js';
export { limitYoungGenerationGrowth } from './gcTuning.js';
