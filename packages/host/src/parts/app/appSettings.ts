import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CapabilityError, z, type CommandDefinition } from '@capnode/capabilities';
import { isHostError } from '../../errors.js';
import { GATEWAY_TOKEN_ENV } from '../../config/paths.js';
import type { Settings } from '../../config/settings.js';
import { maskSettings, previewSettingsPatch, type FieldError } from '../../config/settingsPatch.js';
import { unifiedDiff } from '../../files/textDiff.js';
import { GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE } from '../gateway/gatewayMode.js';
import { askAppApproval, defineAppCommand } from './appCommand.js';
import type { AppPorts } from './appPorts.js';

/** Whether a directory holds any file (OAuth credentials of imported servers). */
function holdsFiles(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** The host's secrets as presence only: which exist, never a value. */
export function secretPresence(ports: AppPorts, settings: Settings): Record<string, unknown> {
  const { paths, env } = ports;
  return {
    mcpToken: existsSync(paths.mcpToken),
    adminToken: existsSync(paths.adminToken),
    gatewayToken: settings.gateway.token !== undefined,
    gatewayTokenFromEnv: Boolean(env[GATEWAY_TOKEN_ENV]),
    gatewayNodeIdentity: existsSync(join(paths.home, GATEWAY_NODE_IDENTITY_FILE)),
    gatewayOperatorIdentity: existsSync(join(paths.home, OPERATOR_IDENTITY_FILE)),
    openagentHeaders: Object.keys(settings.openagent.headers).length > 0,
    oauthCredentials: holdsFiles(join(dirname(ports.settings.path), 'oauth')),
  };
}

const MASKED_NOTE = 'Secret values read as "••••••••"; sending that mask back in app.settings.set keeps the stored value.';

/** The settings as settings.json holds them, masked, in the diff's text form. */
function settingsText(settings: Settings): string {
  return `${JSON.stringify(maskSettings(settings), null, 2)}\n`;
}

/** A refused settings patch: the message names each bad field; the fields travel as data. */
function invalidPatch(refusal: { readonly message: string; readonly fields: readonly FieldError[] }): CapabilityError {
  return new CapabilityError('invalid_arguments', `${refusal.message}: ${refusal.fields.map((field) => `${field.path}: ${field.message}`).join('; ')}`, { data: { fields: refusal.fields } });
}

const setInput = z
  .object({
    patch: z
      .record(z.string(), z.unknown())
      .describe('A partial settings object: objects merge key by key, arrays and values replace, null removes a key (e.g. { "approvals": { "notify": false } }).'),
  })
  .strict();

/** `app.settings.get` and `app.settings.set`. */
export function createAppSettingsCommands(ports: AppPorts): CommandDefinition[] {
  return [
    defineAppCommand(ports, {
      name: 'app.settings.get',
      description: `The host's settings (settings.json), every secret masked, with which secrets exist (presence only: MCP and admin tokens, gateway token and identities, OpenAgent headers, OAuth credentials) and the changed settings that wait for a restart. ${MASKED_NOTE}`,
      annotations: { title: 'Get settings', readOnly: true, idempotent: true },
      input: z.object({}).strict(),
      run: () => {
        const settings = ports.settings.reload();
        return { path: ports.settings.path, settings: maskSettings(settings), secrets: secretPresence(ports, settings), restartNeeded: [...ports.restartNeeded()] };
      },
    }),
    defineAppCommand(ports, {
      name: 'app.settings.set',
      description:
        "Changes the host's settings with a partial object (as the dashboard's settings page does). The person is asked first: the approval shows the change as a diff of settings.json (secrets masked). Validated against the whole schema before anyone is asked; an invalid change names each bad field and writes nothing. Only the change is written; what the running host cannot apply at once is listed in restartNeeded.",
      annotations: { title: 'Change settings', destructive: true, idempotent: true },
      input: setInput,
      async run(args, context) {
        const current = ports.settings.reload();
        const preview = previewSettingsPatch(args.patch, current);
        if (!preview.ok) throw invalidPatch(preview);
        if (preview.changed.length === 0) return { changed: [], applied: [], restartNeeded: [...ports.restartNeeded()] };
        const diff = unifiedDiff(settingsText(current), settingsText(preview.after), { from: 'settings.json', to: 'settings.json (changed)' });
        const summary = `change settings: ${preview.changed.join(', ')}`;
        await askAppApproval(ports, context, {
          command: 'app.settings.set',
          summary,
          // A changed secret shows only as a changed path: its value is masked on both sides.
          diff,
          // Bound to the file the diff was computed from: after another change it is a new request.
          boundTo: { patch: args.patch, revision: ports.settings.revision() },
        });
        let result;
        try {
          result = await ports.patchSettings(args.patch);
        } catch (error) {
          if (isHostError(error) && error.code === 'settings_locked') throw new CapabilityError('busy', `Nothing was changed: ${error.message}`);
          throw error;
        }
        if (!result.ok) throw invalidPatch(result);
        return { changed: [...result.changed], applied: [...result.applied], restartNeeded: [...result.restartNeeded], ...(result.failed ? { failed: [...result.failed] } : {}) };
      },
    }),
  ];
}
