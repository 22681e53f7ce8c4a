import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { staticImportGraph } from '../../../../tests/support/entrySurface.js';

const source = dirname(fileURLToPath(import.meta.url));


describe('the voice part of @capnode/capabilities/pack', () => {
  it('exports its plugins, factories and constants, and lists its plugins in builtinPlugins', async () => {
    const pack = await import('../pack.js');
    for (const name of [
      'clipboardPlugin',
      'createClipboardCapability',
      'probeClipboard',
      'MAX_CLIPBOARD_WRITE_CHARS',
      'ttsPlugin',
      'createTtsCapability',
      'sttPlugin',
      'createSttCapability',
      'MAX_TRANSCRIBE_MS',
      'locationPlugin',
      'createLocationCapability',
      'builtinPlugins',
    ]) {
      expect(pack, name).toHaveProperty(name);
    }
    expect(pack.builtinPlugins.map((entry) => entry.name)).toEqual(expect.arrayContaining(['clipboard', 'tts', 'stt', 'location']));
  });

  it('loads the backends lazily: no backend module is reached by static imports', () => {
    const graph = [...staticImportGraph(join(source, '..', 'pack.ts'))].map((file) => relative(source, file));
    for (const backend of ['clipboardBackend.ts', 'ttsBackend.ts', 'sttEngine.ts', 'locationBackend.ts']) expect(graph, backend).not.toContain(backend);
  });

  it('each plugin turns its settings section into commands', async () => {
    const { builtinPlugins } = await import('../pack.js');
    const context = { settings: {}, log: () => {}, dataDir: '/tmp', configDir: '/tmp/capnode-config', signal: new AbortController().signal };
    const names: string[] = [];
    for (const { name, plugin } of builtinPlugins) {
      if (!['clipboard', 'tts', 'stt', 'location'].includes(name)) continue;
      const made = typeof plugin === 'function' ? await plugin({ ...context, name }) : plugin;
      for (const capability of Array.isArray(made) ? made : [made]) names.push(...capability.commands.map((command: { name: string }) => command.name));
    }
    expect(names.sort()).toEqual(['clipboard.read', 'clipboard.write', 'location.get', 'stt.listen', 'stt.status', 'stt.transcribe', 'tts.speak', 'tts.status']);
  });
});
