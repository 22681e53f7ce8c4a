import type { PluginExport } from './plugin.js';
import { cameraPlugin } from './pack/camera.js';
import { screenPlugin } from './pack/screen.js';

export type { ScreenCapabilityOptions, RecordingNotifier } from './pack/screen.js';
export { createScreenCapability, screenPlugin, probeScreen, MAX_SCREEN_RECORD_MS, DEFAULT_SCREEN_RECORD_MS } from './pack/screen.js';
export type { CameraCapabilityOptions, VirtualCameraSetting } from './pack/camera.js';
export { createCameraCapability, cameraPlugin, cameraSettingsSchema, DEFAULT_CAMERA_CLIP_MS, MIN_CAMERA_CLIP_MS, MAX_CAMERA_CLIP_MS } from './pack/camera.js';
export { MAX_MEDIA_BASE64_BYTES } from './pack/internal/media.js';

/** A plugin of the capability pack that ships with the host, under its settings name (`pluginSettings[name]`). */
export interface BuiltinPlugin {
  readonly name: string;
  readonly plugin: PluginExport;
}

/**
 * The capability pack, as plugins on the public plugin API: each receives its `pluginSettings`
 * section. Backends load on first use, so registering the pack costs little memory.
 */
export const builtinPlugins: readonly BuiltinPlugin[] = [
  { name: 'screen', plugin: screenPlugin },
  { name: 'camera', plugin: cameraPlugin },
];
