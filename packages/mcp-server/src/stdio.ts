export type { ServeStdioOptions, StdioServer } from './stdioServer.js';
export { serveStdio } from './stdioServer.js';
