/**
 * The capability pack (node-only): plugins for clipboard, speech, location and more, built on the
 * plugin API (`PluginExport`). Each backend loads lazily, inside the command that needs it.
 */
import type { PluginExport } from './plugin.js';

/** One plugin of the capability pack: its name (the `pluginSettings` key) and the plugin itself. */
export interface BuiltinPlugin {
  readonly name: string;
  readonly plugin: PluginExport;
}
import { clipboardPlugin } from './pack/clipboard.js';
import { locationPlugin } from './pack/location.js';
import { sttPlugin } from './pack/stt.js';
import { ttsPlugin } from './pack/tts.js';

export type { PackEnvironment } from './pack/internal/voiceProbe.js';
export { MAX_BASE64_BYTES } from './pack/internal/voiceProbe.js';
export type { ClipboardOptions } from './pack/clipboard.js';
export { clipboardPlugin, createClipboardCapability, probeClipboard, MAX_CLIPBOARD_WRITE_CHARS } from './pack/clipboard.js';
export type { TtsOptions, TtsProviderName } from './pack/tts.js';
export { ttsPlugin, createTtsCapability } from './pack/tts.js';
export type { SttOptions, SttMicrophoneSource } from './pack/stt.js';
export { sttPlugin, createSttCapability, MAX_TRANSCRIBE_MS } from './pack/stt.js';
export type { LocationOptions, LocationErrorCode } from './pack/location.js';
export { locationPlugin, createLocationCapability } from './pack/location.js';

/** The pack's plugins, as the host loads them: each name is also its `pluginSettings` section. */
export const builtinPlugins: readonly BuiltinPlugin[] = [
  { name: 'clipboard', plugin: clipboardPlugin },
  { name: 'tts', plugin: ttsPlugin },
  { name: 'stt', plugin: sttPlugin },
  { name: 'location', plugin: locationPlugin },
];
