import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectEntryImports, staticImportGraph } from '../../../tests/support/entrySurface.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

/** Modules loaded when the entry is imported (static imports only: `import(...)` loads later), relative to src/. */
const staticGraph = (entry: string): Set<string> => new Set([...staticImportGraph(join(sourceDirectory, entry))].map((file) => relative(sourceDirectory, file)));

describe('@capnode/capabilities/pack', () => {
  it('loads no sibling package but the toolkit: zod, Node built-ins and @capnode/toolkit only', () => {
    expectEntryImports(join(sourceDirectory, 'pack.ts'), (specifier) => specifier === 'zod' || specifier.startsWith('node:') || specifier === '@capnode/toolkit');
  });

  it('loads the screen, camera and voice backends lazily (X11 client, PNG encoder, pixels, platform backends, speech, clipboard, locator)', () => {
    const loaded = staticGraph('pack.ts');
    expect(loaded).toContain('pack/screen.ts');
    expect(loaded).toContain('pack/camera.ts');
    for (const heavy of ['pack/internal/screenBackend.ts', 'pack/internal/cameraBackend.ts', 'pack/internal/png.ts', 'pack/internal/pixels.ts', 'pack/internal/screenLinux.ts', 'pack/internal/screenOther.ts', 'pack/internal/x11.ts', 'pack/internal/x11Wire.ts', 'builtins/systemNotify.ts', 'pack/sttEngine.ts', 'pack/ttsBackend.ts', 'pack/clipboardBackend.ts', 'pack/locationBackend.ts']) {
      expect(loaded, heavy).not.toContain(heavy);
    }
    for (const lazy of ['pack/internal/fsOps.ts', 'pack/internal/fsSearch.ts', 'pack/internal/fsSearchWorker.ts', 'pack/internal/fsSearchRun.ts', 'pack/internal/editorOps.ts', 'pack/internal/lineDiff.ts', 'pack/internal/glob.ts']) {
      expect(loaded, lazy).not.toContain(lazy);
    }
    // A camera command does not load the screen's X11 client or pixel code either.
    const camera = staticGraph('pack/internal/cameraBackend.ts');
    for (const screenOnly of ['pack/internal/screenLinux.ts', 'pack/internal/screenOther.ts', 'pack/internal/x11.ts', 'pack/internal/pixels.ts']) expect(camera, screenOnly).not.toContain(screenOnly);
  });

  it('exports the screen and camera plugins and builtinPlugins', async () => {
    const entry = await import('./pack.js');
    expect(Object.keys(entry).sort()).toEqual(
      expect.arrayContaining([
        'DEFAULT_CAMERA_CLIP_MS',
        'DEFAULT_SCREEN_RECORD_MS',
        'MAX_CAMERA_CLIP_MS',
        'MAX_SCREEN_RECORD_MS',
        'MIN_CAMERA_CLIP_MS',
        'builtinPlugins',
        'cameraPlugin',
        'cameraSettingsSchema',
        'createCameraCapability',
        'createScreenCapability',
        'probeScreen',
        'screenPlugin',
      ]),
    );
    const names = entry.builtinPlugins.map((plugin) => plugin.name);
    expect(names).toEqual(expect.arrayContaining(['screen', 'camera']));
  });

  it('declares consent and availability on the media commands', async () => {
    const { createScreenCapability, createCameraCapability } = await import('./pack.js');
    const commands = [...createScreenCapability().commands, ...createCameraCapability().commands];
    const consent = Object.fromEntries(commands.map((command) => [command.name, command.consent ?? null]));
    expect(consent).toEqual({
      'screen.list': 'screen',
      'screen.snapshot': 'screen',
      'screen.record': 'screen',
      'camera.list': null,
      'camera.snap': 'camera',
      'camera.clip': 'camera',
    });
    for (const command of commands.filter((entry) => entry.name !== 'camera.list')) expect(typeof command.availability, command.name).toBe('function');
  });
});

describe('files and editor commands', () => {
  it('all need consent category files', async () => {
    const { createFilesCapability, createEditorCapability } = await import('./pack.js');
    const commands = [...createFilesCapability().commands, ...createEditorCapability().commands];
    expect(commands.map((command) => command.name).sort()).toEqual([
      'editor.create',
      'editor.insert',
      'editor.str_replace',
      'editor.undo',
      'editor.view',
      'fs.delete',
      'fs.list',
      'fs.mkdir',
      'fs.move',
      'fs.read',
      'fs.search',
      'fs.stat',
      'fs.write',
    ]);
    for (const command of commands) expect(command.consent, command.name).toBe('files');
    const withDiff = commands.filter((command) => command.approvalDiff !== undefined).map((command) => command.name).sort();
    expect(withDiff).toEqual(['editor.create', 'editor.insert', 'editor.str_replace', 'editor.undo', 'fs.write']);
  });
});
