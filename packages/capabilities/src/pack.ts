/**
 * The capability pack (node-only): screen, camera, clipboard, speech, location and files, each a plugin on
 * the public plugin API (`PluginExport`). Backends load on first use, inside the command that needs
 * them, so registering the pack costs little memory.
 */
import type { PluginExport } from './plugin.js';
import { cameraPlugin } from './pack/camera.js';
import { clipboardPlugin } from './pack/clipboard.js';
import { filesPlugin } from './pack/files.js';
import { locationPlugin } from './pack/location.js';
import { screenPlugin } from './pack/screen.js';
import { sttPlugin } from './pack/stt.js';
import { ttsPlugin } from './pack/tts.js';

export type { ScreenCapabilityOptions, RecordingNotifier } from './pack/screen.js';
export { createScreenCapability, screenPlugin, probeScreen, MAX_SCREEN_RECORD_MS, DEFAULT_SCREEN_RECORD_MS } from './pack/screen.js';
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
export { locationPlugin, createLocationCapability } from './pack/location.js';

/** One plugin of the capability pack: its name (the `pluginSettings` key) and the plugin itself. */
export interface BuiltinPlugin {
  readonly name: string;
  readonly plugin: PluginExport;
}

/** The pack's plugins, as the host loads them: each name is also its `pluginSettings` section. */
export const builtinPlugins: readonly BuiltinPlugin[] = [
  { name: 'screen', plugin: screenPlugin },
  { name: 'camera', plugin: cameraPlugin },
  { name: 'clipboard', plugin: clipboardPlugin },
  { name: 'tts', plugin: ttsPlugin },
  { name: 'stt', plugin: sttPlugin },
  { name: 'location', plugin: locationPlugin },
  { name: 'files', plugin: filesPlugin },
];
