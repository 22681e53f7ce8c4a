import { z } from 'zod';
import type { Content } from '../content.js';
import { defineCapability, defineCommand, type Availability, type Capability } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin } from '../plugin.js';
import type { ClipboardBackend, ClipboardBackendName } from './clipboardBackend.js';
import { toBoundedBase64 } from './internal/media.js';
import { envOf, findFirst, platformOf, type PackEnvironment } from './internal/voiceProbe.js';

/** Options of {@link createClipboardCapability}. */
export type ClipboardOptions = PackEnvironment;

/** Longest text `clipboard.write` takes (1 MiB of UTF-16 code units). */
export const MAX_CLIPBOARD_WRITE_CHARS = 1024 * 1024;

/** Which backend this platform and session use, and what to install for it. */
export function clipboardRequirements(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): { readonly backend: ClipboardBackendName; readonly install: string } {
  if (platform === 'win32') return { backend: 'windows', install: 'Windows PowerShell (powershell.exe)' };
  if (platform === 'darwin') return { backend: 'macos', install: 'pbcopy, pbpaste and osascript (part of macOS)' };
  if (env.WAYLAND_DISPLAY) return { backend: 'wl-clipboard', install: 'wl-clipboard (Debian/Ubuntu: apt install wl-clipboard)' };
  return { backend: 'xclip', install: 'xclip (Debian/Ubuntu: apt install xclip) and an X display (DISPLAY)' };
}

/** PATH lookups only: the backend's programs, and on Linux a display to own a selection on. */
export async function probeClipboard(options: PackEnvironment = {}): Promise<Availability> {
  const env = envOf(options);
  const platform = platformOf(options);
  const { backend, install } = clipboardRequirements(platform, env);
  const has = async (name: string) => (await findFirst([name], options)) !== undefined;
  if (backend === 'windows') return (await findFirst(['powershell', 'pwsh'], options)) ? { available: true } : { available: false, install };
  if (backend === 'macos') return (await has('pbcopy')) && (await has('pbpaste')) && (await has('osascript')) ? { available: true } : { available: false, install };
  if (backend === 'wl-clipboard' && (await has('wl-copy')) && (await has('wl-paste'))) return { available: true };
  const xclip = await has('xclip');
  if (env.DISPLAY && xclip) return { available: true };
  // Name only what is missing: a machine with xclip but no DISPLAY needs a display, not a package.
  if (xclip && backend === 'xclip') return { available: false, install: 'an X display: DISPLAY is not set (xclip is installed)' };
  if (env.DISPLAY && backend === 'xclip') return { available: false, install: 'xclip (Debian/Ubuntu: apt install xclip)' };
  return { available: false, install };
}

async function openBackend(options: PackEnvironment): Promise<ClipboardBackend> {
  const { findClipboardBackend } = await import('./clipboardBackend.js');
  const env = envOf(options);
  const { backend, install } = clipboardRequirements(platformOf(options), env);
  const found = await findClipboardBackend(backend, options);
  if (!found) throw new CapabilityError('unavailable', `unavailable here: install ${install}`);
  return found;
}

const readInput = z.strictObject({
  format: z
    .enum(['auto', 'text', 'image'])
    .default('auto')
    .describe('`auto`: the text when the clipboard holds text, else its image; `text` or `image` read only that.'),
});

const writeInput = z
  .strictObject({
    text: z.string().max(MAX_CLIPBOARD_WRITE_CHARS).optional().describe('Text to put on the clipboard.'),
    imageBase64: z.string().max(26_148_864).optional().describe('A PNG image, base64, to put on the clipboard instead of text.'),
    mimeType: z.literal('image/png').default('image/png').describe('Type of `imageBase64`; only PNG.'),
  })
  .refine((value) => (value.text === undefined) !== (value.imageBase64 === undefined), { message: 'Give exactly one of `text` and `imageBase64`.' });

function decodePng(base64: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new CapabilityError('invalid_arguments', '`imageBase64` is not base64.');
  return Buffer.from(base64, 'base64');
}

/**
 * `clipboard.read` and `clipboard.write`: text, and PNG images where the backend allows (xclip on X11,
 * wl-clipboard on Wayland, pbcopy/pbpaste and osascript on macOS, PowerShell on Windows).
 */
export function createClipboardCapability(options: ClipboardOptions = {}): Capability {
  const availability = () => probeClipboard(options);
  return defineCapability({
    category: 'clipboard',
    commands: [
      defineCommand({
        name: 'clipboard.read',
        description: "Reads the clipboard of this machine's desktop session: its text, or its image as PNG.",
        annotations: { title: 'Read the clipboard', readOnly: true },
        input: readInput,
        availability,
        async execute({ format }, ctx) {
          const backend = await openBackend(options);
          if (format !== 'image') {
            const read = await backend.readText(ctx.signal);
            if (read) {
              const structured = { format: 'text', text: read.text, empty: false, ...(read.truncated ? { truncated: true } : {}), backend: backend.name };
              return { ok: true, content: [{ type: 'text', text: read.text }], structured };
            }
            if (format === 'text') return { ok: true, content: [{ type: 'text', text: '' }], structured: { format: 'text', text: '', empty: true, backend: backend.name } };
          }
          const png = await backend.readImage(ctx.signal);
          if (!png || png.length === 0) {
            return { ok: true, content: [{ type: 'text', text: 'The clipboard is empty.' }], structured: { format: 'none', empty: true, backend: backend.name } };
          }
          const { pngSize } = await import('./clipboardBackend.js');
          const base64 = toBoundedBase64(png, 'The clipboard image', 'copy a smaller image');
          const size = pngSize(png);
          const structured = { format: 'png', mimeType: 'image/png', base64, ...(size ?? {}), empty: false, backend: backend.name };
          const content: Content[] = [
            { type: 'image', data: base64, mimeType: 'image/png' },
            { type: 'text', text: JSON.stringify({ format: 'png', mimeType: 'image/png', ...(size ?? {}), bytes: png.length }) },
          ];
          return { ok: true, content, structured };
        },
      }),
      defineCommand({
        name: 'clipboard.write',
        description: "Puts text, or a PNG image, on the clipboard of this machine's desktop session.",
        annotations: { title: 'Write the clipboard', readOnly: false, destructive: true, idempotent: true },
        input: writeInput,
        availability,
        async execute(args, ctx) {
          const backend = await openBackend(options);
          if (args.text !== undefined) {
            await backend.writeText(args.text, ctx.signal);
            const result = { ok: true, format: 'text', bytes: Buffer.byteLength(args.text), backend: backend.name };
            return { ok: true, content: [{ type: 'text', text: JSON.stringify(result) }], structured: result };
          }
          const png = decodePng(args.imageBase64 ?? '');
          const { pngSize } = await import('./clipboardBackend.js');
          const size = pngSize(png);
          if (!size) throw new CapabilityError('invalid_arguments', '`imageBase64` is not a PNG image.');
          await backend.writeImage(png, ctx.signal);
          const result = { ok: true, format: 'png', bytes: png.length, ...size, backend: backend.name };
          return { ok: true, content: [{ type: 'text', text: JSON.stringify(result) }], structured: result };
        },
      }),
    ],
  });
}

/** The clipboard plugin of the pack (no settings). */
export const clipboardPlugin = definePlugin(() => createClipboardCapability());
