import { apiError, json, readJsonBody } from '../reply.js';
import { maskSettings } from '../../../config/settingsPatch.js';
import type { Route } from '../types.js';

/**
 * `GET /api/settings` (secrets masked; `restartNeeded` lists what changed since start and applies
 * after a restart) and `PATCH /api/settings` (a partial object; validated whole, 400 with `fields`
 * per path; live where the host can apply it).
 */
export const settingsRoutes: readonly Route[] = [
  ['GET', '/api/settings', ({ host }) => json(200, { settings: maskSettings(host.settings.reload()), restartNeeded: host.restartNeeded() })],
  [
    'PATCH',
    '/api/settings',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const result = await host.patchSettings(body);
      if (!result.ok) return apiError(400, 'invalid', result.message, result.fields);
      return json(200, { settings: result.settings, applied: result.applied, restartNeeded: result.restartNeeded, ...(result.failed ? { failed: result.failed } : {}) });
    },
  ],
];
