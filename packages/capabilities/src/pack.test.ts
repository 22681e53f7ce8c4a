import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectEntryImports, staticImportGraph } from '../../../tests/support/entrySurface.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

/** Modules loaded when the entry is imported (static imports only: `import(...)` loads later), relative to src/. */
const staticGraph = (entry: string): Set<string> => new Set([...staticImportGraph(join(sourceDirectory, entry))].map((file) => relative(sourceDirectory, file)));

describe('@capnode/capabilities/pack', () => {
  it('loads no sibling package but the toolkit: zod, Node built-ins and @capnode/toolkit only', () => {
    // playwright-core is the browser engine's own dependency, imported dynamically on first use (checked below).
    expectEntryImports(join(sourceDirectory, 'pack.ts'), (specifier) => specifier === 'zod' || specifier.startsWith('node:') || specifier === '@capnode/toolkit' || specifier === 'playwright-core');
  });

  it('loads playwright-core only inside the browser engine, only by dynamic import, and never at pack load', () => {
    const pack = join(sourceDirectory, 'pack');
    const files = readdirSync(pack, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
    const importing = files.filter((file) => readFileSync(join(pack, file), 'utf8').includes("'playwright-core'"));
    expect(importing).toEqual([join('internal', 'browserEngine.ts')]);
    const engine = readFileSync(join(pack, 'internal', 'browserEngine.ts'), 'utf8');
    for (const match of engine.matchAll(/^.*'playwright-core'.*$/gm)) expect(match[0]).toMatch(/^import type |await import\('playwright-core'\)/);
    expect(staticGraph('pack.ts')).not.toContain('pack/internal/browserEngine.ts');
  });

  it('loads the screen, camera and voice backends lazily (X11 client, PNG encoder, pixels, platform backends, speech, clipboard, locator)', () => {
    const loaded = staticGraph('pack.ts');
    expect(loaded).toContain('pack/screen.ts');
    expect(loaded).toContain('pack/camera.ts');
    for (const heavy of ['pack/internal/screenBackend.ts', 'pack/internal/cameraBackend.ts', 'pack/internal/png.ts', 'pack/internal/pixels.ts', 'pack/internal/screenLinux.ts', 'pack/internal/screenOther.ts', 'pack/internal/x11.ts', 'pack/internal/x11Wire.ts', 'builtins/systemNotify.ts', 'pack/sttEngine.ts', 'pack/ttsBackend.ts', 'pack/clipboardBackend.ts', 'pack/locationBackend.ts', 'pack/internal/shellSessions.ts', 'pack/internal/shellSession.ts', 'internal/execLaunch.ts', 'pack/internal/canvasWindow.ts', 'pack/internal/canvasBrowser.ts']) {
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

  it('declares the shell commands local-only, shell.start gated by the exec policy and no consent category', async () => {
    const { createShellCapability, builtinPlugins } = await import('./pack.js');
    expect(builtinPlugins.map((plugin) => plugin.name)).toContain('shell');
    const commands = createShellCapability().commands;
    expect(commands.map((command) => [command.name, command.approval ?? null, command.localOnly ?? false, command.consent ?? null])).toEqual([
      ['shell.start', 'exec', true, null],
      ['shell.read', null, true, null],
      ['shell.write', null, true, null],
      ['shell.kill', null, true, null],
      ['shell.list', null, true, null],
    ]);
  });

  it('gives the canvas no consent category (it shows and reads only its own window) and an availability probe', async () => {
    const { createCanvasCapability, builtinPlugins } = await import('./pack.js');
    const canvas = createCanvasCapability({ profileDir: '/nonexistent' });
    expect(canvas.category).toBe('canvas');
    expect(canvas.commands.map((command) => command.name)).toEqual(['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot', 'canvas.caps', 'canvas.a2ui.push', 'canvas.a2ui.pushJSONL', 'canvas.a2ui.reset', 'canvas.a2ui.dump']);
    for (const command of canvas.commands) expect(command.consent, command.name).toBeUndefined();
    for (const command of canvas.commands) expect(typeof command.availability, command.name).toBe('function');
    // Without Chromium (or a display) every canvas command is unavailable, so no `canvas` cap is declared.
    const bare = createCanvasCapability({ profileDir: '/nonexistent', env: { PATH: '/nonexistent' }, platform: 'linux' });
    for (const command of bare.commands) expect(await command.availability!({}), command.name).toMatchObject({ available: false });
    expect(builtinPlugins.map((plugin) => plugin.name)).toContain('canvas');
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
