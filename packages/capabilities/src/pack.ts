/**
 * The capability pack (node-only): every built-in machine capability, each a plugin on
 * the public plugin API (`PluginExport`). Backends load on first use, inside the command that needs
 * them, so registering the pack costs little memory.
 */
import type { PluginExport } from './plugin.js';
import { createBrowserPlugin } from './pack/browser.js';
import { cameraPlugin } from './pack/camera.js';
import { createCanvasPlugin, type GatewayCanvasSurface } from './pack/canvas.js';
import { clipboardPlugin } from './pack/clipboard.js';
import { computerPlugin } from './pack/computer.js';
import { filesPlugin } from './pack/files.js';
import { locationPlugin } from './pack/location.js';
import { screenPlugin } from './pack/screen.js';
import { shellPlugin } from './pack/shell.js';
import { sttPlugin } from './pack/stt.js';
import { ttsPlugin } from './pack/tts.js';

export type { ScreenCapabilityOptions, RecordingNotifier } from './pack/screen.js';
export { createScreenCapability, screenPlugin, probeScreen, MAX_SCREEN_RECORD_MS, DEFAULT_SCREEN_RECORD_MS } from './pack/screen.js';
export type { ComputerCapabilityOptions } from './pack/computer.js';
export type { DisplayFrame, DisplayFrames, FrameRect } from './pack/internal/displayFrames.js';
export { createDisplayFrames } from './pack/internal/displayFrames.js';
export { createComputerCapability, computerPlugin, COMPUTER_NOTICE_QUIET_MS } from './pack/computer.js';
export type { CameraCapabilityOptions, VirtualCameraSetting } from './pack/camera.js';
export { createCameraCapability, cameraPlugin, cameraSettingsSchema, DEFAULT_CAMERA_CLIP_MS, MIN_CAMERA_CLIP_MS, MAX_CAMERA_CLIP_MS } from './pack/camera.js';
export type { PackEnvironment } from './pack/internal/voiceProbe.js';
export type { ClipboardOptions } from './pack/clipboard.js';
export { clipboardPlugin, createClipboardCapability, probeClipboard, MAX_CLIPBOARD_WRITE_CHARS } from './pack/clipboard.js';
export type { TtsOptions, TtsProviderName } from './pack/tts.js';
export { ttsPlugin, createTtsCapability } from './pack/tts.js';
export type { SttOptions, SttMicrophoneSource } from './pack/stt.js';
export { sttPlugin, createSttCapability, MAX_TRANSCRIBE_MS } from './pack/stt.js';
export type { FilesOptions } from './pack/files.js';
export {
  filesPlugin,
  createFilesCapability,
  filesSettingsSchema,
  DEFAULT_READ_BYTES,
  MAX_READ_BYTES,
  MAX_WRITE_BYTES,
  MAX_LIST_ENTRIES,
  MAX_LIST_DEPTH,
  MAX_SEARCH_MATCHES,
  DEFAULT_SEARCH_TIMEOUT_MS,
} from './pack/files.js';
export { createEditorCapability, MAX_EDITOR_TEXT_CHARS, MAX_UNDO_PER_FILE, MAX_EDIT_FILE_BYTES } from './pack/editor.js';
export type { LocationOptions, LocationErrorCode } from './pack/location.js';
export type { BrowserCapabilityOptions, BrowserCapability } from './pack/browser.js';
export { browserPlugin, createBrowserPlugin, createBrowserCapability, probeBrowser, browserSettingsSchema } from './pack/browser.js';
export { MAX_BROWSER_UPLOAD_FILE_BYTES, MAX_BROWSER_UPLOAD_TOTAL_BYTES, MAX_BROWSER_UPLOAD_FILES } from './pack/internal/browserUpload.js';
export type { BrowserEngine, BrowserEngineStatus, BrowserTabInfo, BrowserSnapshot, BrowserAriaNode, BrowserAriaSnapshot, BrowserUploadTarget } from './pack/internal/browserEngine.js';
export { checkBrowserUrl, MAX_BROWSER_TEXT_CHARS, MAX_BROWSER_URL_CHARS } from './pack/internal/browserArgs.js';
export { findChromiumExecutable } from './pack/internal/chromiumPath.js';
export { locationPlugin, createLocationCapability } from './pack/location.js';
export type { ShellCapabilityOptions } from './pack/shell.js';
export {
  shellPlugin,
  createShellCapability,
  shellSettingsSchema,
  DEFAULT_SHELL_SESSIONS_PER_CALLER,
  DEFAULT_SHELL_OUTPUT_BYTES,
  MAX_SHELL_READ_BYTES,
  MAX_SHELL_WRITE_BYTES,
  MAX_SHELL_READ_WAIT_MS,
} from './pack/shell.js';
export type { ShellSessionSummary, ShellReadResult } from './pack/internal/shellViews.js';
export type { StreamRead } from './pack/internal/outputRing.js';
export type { CanvasOptions, GatewayCanvasSurface, GatewayCanvasSurfaceSource } from './pack/canvas.js';
export { canvasPlugin, createCanvasPlugin, createCanvasCapability, probeCanvas, MAX_CANVAS_HTML_BYTES, MAX_CANVAS_SCRIPT_CHARS, MAX_CANVAS_EVAL_RESULT_CHARS } from './pack/canvas.js';

/** One plugin of the capability pack: its name (the `pluginSettings` key) and the plugin itself. */
export interface BuiltinPlugin {
  readonly name: string;
  readonly plugin: PluginExport;
}

/** What the host lends the pack's plugins: narrow ports to its other parts. */
export interface BuiltinPluginPorts {
  /** The connected gateway's `pluginSurfaceUrls.canvas` (the canvas resolves hosted paths against it). */
  readonly gatewayCanvasUrl?: GatewayCanvasSurface;
  /** The files plugin's settings (`pluginSettings.files`), read per call: `browser.upload` reads from the same roots. */
  readonly filesSettings?: () => Readonly<Record<string, unknown>>;
}

/** The pack's plugins wired to the host's ports: each name is also its `pluginSettings` section. */
export function createBuiltinPlugins(ports: BuiltinPluginPorts = {}): readonly BuiltinPlugin[] {
  return [
    { name: 'screen', plugin: screenPlugin },
    { name: 'computer', plugin: computerPlugin },
    { name: 'camera', plugin: cameraPlugin },
    { name: 'clipboard', plugin: clipboardPlugin },
    { name: 'tts', plugin: ttsPlugin },
    { name: 'stt', plugin: sttPlugin },
    { name: 'location', plugin: locationPlugin },
    { name: 'shell', plugin: shellPlugin },
    { name: 'browser', plugin: createBrowserPlugin(ports.filesSettings) },
    { name: 'files', plugin: filesPlugin },
    { name: 'canvas', plugin: createCanvasPlugin(ports.gatewayCanvasUrl) },
  ];
}

/** The pack's plugins, as a host without a gateway loads them. */
export const builtinPlugins: readonly BuiltinPlugin[] = createBuiltinPlugins();
