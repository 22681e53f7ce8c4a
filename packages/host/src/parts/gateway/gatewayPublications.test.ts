import { join } from 'node:path';
import { createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { publishedToolNames } from '@capnode/gateway-bridge';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../../../tests/support/testHost.js';
import { createSettingsStore } from '../../config/settings.js';
import { SKILL_DESCRIPTION, SKILL_NAME } from '../../skill/skillMarkdown.js';
import { createGatewayPublications, isPublishedServer } from './gatewayPublications.js';

function importedFixture() {
  const registry = createRegistry([
    defineCapability({
      category: 'mcp',
      commands: [
        defineCommand({ name: 'everything__echo', description: 'Echoes back the input.', localOnly: true, inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, execute: () => 'x' }),
        defineCommand({ name: 'other__tool', description: 'Other.', localOnly: true, execute: () => 'x' }),
      ],
    }),
  ]);
  let origins = new Map([
    ['everything__echo', { server: 'everything', tool: 'echo' }],
    ['other__tool', { server: 'other', tool: 'tool' }],
  ]);
  const listeners = new Set<() => void>();
  return {
    registry,
    imports: {
      origins: () => origins,
      subscribeOrigins(listener: () => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    drop(server: string) {
      origins = new Map([...origins].filter(([, origin]) => origin.server !== server));
      for (const listener of listeners) listener();
    },
  };
}

describe('gateway node publications', () => {
  it('publishes nothing by default, the named servers or all, with description and schema; follows the catalog and settings', async () => {
    using dir = tempDir();
    const settings = createSettingsStore(join(dir.path, 'settings.json'));
    const fixture = importedFixture();
    const publications = createGatewayPublications({ settings, registry: fixture.registry, imports: fixture.imports });
    let heard = 0;
    publications.subscribe(() => void (heard += 1));
    expect(publications.mcpTools()).toEqual([]);
    expect(isPublishedServer(settings.get(), 'everything')).toBe(false);

    await settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: ['everything'] } }));
    publications.changed();
    expect(heard).toBe(1);
    expect(publications.mcpTools()).toEqual([
      { server: 'everything', tool: 'echo', command: 'everything__echo', description: 'Echoes back the input.', parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
    ]);
    expect(publishedToolNames(publications.mcpTools()).tools.map((tool) => tool.name)).toEqual(['everything__echo']);

    await settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: 'all' } }));
    expect(publications.mcpTools().map((tool) => tool.command).sort()).toEqual(['everything__echo', 'other__tool']);
    fixture.drop('everything');
    expect(heard).toBe(2);
    expect(publications.mcpTools().map((tool) => tool.command)).toEqual(['other__tool']);

    const [skill] = publications.skills();
    expect(skill).toMatchObject({ name: SKILL_NAME, description: SKILL_DESCRIPTION });
    expect(skill!.content.startsWith(`---\nname: ${SKILL_NAME}\ndescription: ${SKILL_DESCRIPTION}\n---\n`)).toBe(true);
    publications.close();
    fixture.drop('other');
    expect(heard).toBe(2);
  });

  it('settings refuse a publishServers that is neither "all" nor a list of names', async () => {
    using dir = tempDir();
    const settings = createSettingsStore(join(dir.path, 'settings.json'));
    await expect(settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: 'some' as never } }))).rejects.toThrow(/gateway\.publishServers/);
    await expect(settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: [''] } }))).rejects.toThrow(/gateway\.publishServers/);
    expect(settings.get().gateway.publishServers).toBeUndefined();
  });

  it('publishServers edge inputs: non-arrays, over-long lists and names refused; `__` names, unknown names and case are matched literally', async () => {
    using dir = tempDir();
    const settings = createSettingsStore(join(dir.path, 'settings.json'));
    for (const bad of [{ everything: true }, 'ALL', 3, null, [3], ['x'.repeat(129)], Array.from({ length: 257 }, (_, index) => `s${index}`), Array.from({ length: 1000 }, (_, index) => `s${index}`)]) {
      await expect(settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: bad as never } })), JSON.stringify(bad).slice(0, 40)).rejects.toThrow(/gateway\.publishServers/);
    }
    expect(settings.get().gateway.publishServers).toBeUndefined();
    const most = Array.from({ length: 256 }, (_, index) => `s${index}`);
    await settings.update((current) => ({ ...current, gateway: { ...current.gateway, publishServers: [...most.slice(0, 252), 'a__b', 'nosuch', 'Everything', 'x'.repeat(128)] } }));
    const current = settings.get();
    expect(current.gateway.publishServers).toHaveLength(256);
    expect(isPublishedServer(current, 'a__b')).toBe(true);
    expect(isPublishedServer(current, 'a')).toBe(false);
    expect(isPublishedServer(current, 'everything')).toBe(false);
    expect(isPublishedServer(current, 'Everything')).toBe(true);
    // An unknown name publishes nothing and is not an error.
    const fixture = importedFixture();
    const publications = createGatewayPublications({ settings, registry: fixture.registry, imports: fixture.imports });
    expect(publications.mcpTools()).toEqual([]);
    publications.close();
  });
});
