import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: bound on 127.0.0.1 port 0, then released. For peers that cannot
 * listen on port 0 and report it, and for URLs that must refuse connections.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port bound'))));
    });
  });
}
