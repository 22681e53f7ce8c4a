import { apiError } from './reply.js';
import type { Route, RouteHandler } from './types.js';

interface Compiled {
  readonly method: string;
  readonly regex: RegExp;
  readonly names: readonly string[];
  readonly handler: RouteHandler;
}

/** A matcher over `routes`: the handler and decoded params, or the 404 / 405 reply. */
export function createRouter(routes: readonly Route[]): (method: string, path: string) => { handler: RouteHandler; params: Record<string, string> } | Response {
  const compiled: Compiled[] = routes.map(([method, pattern, handler]) => {
    const names: string[] = [];
    const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_match, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { method, regex: new RegExp(`^${source}/?$`), names, handler };
  });
  return (method, path) => {
    let pathMatched = false;
    for (const route of compiled) {
      const match = route.regex.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      try {
        route.names.forEach((name, index) => (params[name] = decodeURIComponent(match[index + 1]!)));
      } catch {
        return apiError(400, 'invalid', 'malformed path parameter');
      }
      return { handler: route.handler, params };
    }
    return pathMatched ? apiError(405, 'method', `${method} is not allowed on ${path}`) : apiError(404, 'not_found', `no API route ${path}`);
  };
}
