import type { Registry } from '@capnode/capabilities';
import type { GatewayNodeMcpTool, GatewayNodePublications, GatewayNodeSkill } from '@capnode/gateway-bridge';
import type { Settings, SettingsStore } from '../../config/settings.js';
import { SKILL_DESCRIPTION, SKILL_NAME, formatSkillMarkdown } from '../../skill/skillMarkdown.js';
import type { ImportedTools } from '../imports/importedTools.js';

export interface GatewayPublicationsOptions {
  readonly settings: SettingsStore;
  readonly registry: Registry;
  readonly imports: Pick<ImportedTools, 'origins' | 'subscribeOrigins'>;
}

/** What the host's gateway node publishes, and the call that says the settings behind it changed. */
export interface GatewayPublications extends GatewayNodePublications {
  /** `gateway.publishServers` (or anything else the skill shows) changed: publish again. */
  changed(): void;
  close(): void;
}

/** Whether `gateway.publishServers` names `server` (`"all"`, or the name in the list; none when absent). */
export function isPublishedServer(settings: Settings, server: string): boolean {
  const publish = settings.gateway.publishServers;
  return publish === 'all' || (Array.isArray(publish) && publish.includes(server));
}

/**
 * The host's gateway node publications: the imported MCP tools of the servers `gateway.publishServers`
 * names (each with the description and JSON Schema the registry holds for it), and the capnode skill
 * generated from the registry and settings. Listeners hear of every change of the imported catalog
 * (a server's tool list changed, a server went away) and of {@link GatewayPublications.changed}.
 */
export function createGatewayPublications(options: GatewayPublicationsOptions): GatewayPublications {
  const { settings, registry, imports } = options;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  const unsubscribe = imports.subscribeOrigins(notify);
  return {
    mcpTools() {
      const current = settings.get();
      const tools: GatewayNodeMcpTool[] = [];
      for (const [command, origin] of imports.origins()) {
        if (!isPublishedServer(current, origin.server)) continue;
        const registered = registry.resolve(command);
        if (!registered) continue;
        tools.push({ server: origin.server, tool: origin.tool, command: registered.name, description: registered.definition.description, parameters: registered.inputSchema as Record<string, unknown> });
      }
      return tools;
    },
    skills(): readonly GatewayNodeSkill[] {
      return [{ name: SKILL_NAME, description: SKILL_DESCRIPTION, content: formatSkillMarkdown(registry.commands(), settings.get()) }];
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    changed: notify,
    close: unsubscribe,
  };
}
