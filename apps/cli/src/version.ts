import { createRequire } from 'node:module';

/** The CLI's version, from its package.json. */
export function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}
