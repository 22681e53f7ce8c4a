import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CapabilityError } from '../errors.js';
import { checkRun, firstLine, powershellArgs, runTool, type ToolRunResult } from './internal/voiceProcess.js';
import { envOf, findFirst, type PackEnvironment } from './internal/voiceProbe.js';

/** Which program family serves the clipboard. */
export type ClipboardBackendName = 'xclip' | 'wl-clipboard' | 'macos' | 'windows';

/** The formats on the clipboard now. */
export interface ClipboardFormats {
  readonly text: boolean;
  readonly image: boolean;
}

const TEXT_TARGETS = ['UTF8_STRING', 'text/plain;charset=utf-8', 'STRING', 'TEXT', 'text/plain'];
const CLIPBOARD_TIMEOUT_MS = 10_000;
/** Clipboard text kept on read (4 MiB); more is reported as truncated. */
export const MAX_CLIPBOARD_TEXT_BYTES = 4 * 1024 * 1024;
/** Raw image bytes read at most: what fits the gateway's base64 cap, plus one byte to detect overflow. */
const MAX_IMAGE_BYTES = Math.floor((26_148_864 / 4) * 3) + 1;

/** xclip arguments: `targets` lists the formats, `read`/`write` move one target. */
export function xclipArgs(op: 'targets' | 'read' | 'write', target?: string): string[] {
  if (op === 'targets') return ['-selection', 'clipboard', '-t', 'TARGETS', '-o'];
  if (op === 'read') return ['-selection', 'clipboard', '-t', target ?? 'UTF8_STRING', '-o'];
  return ['-selection', 'clipboard', '-t', target ?? 'UTF8_STRING', '-i'];
}

/** wl-paste / wl-copy arguments. */
export function wlArgs(op: 'targets' | 'readText' | 'readImage' | 'writeText' | 'writeImage'): { readonly program: 'wl-paste' | 'wl-copy'; readonly args: string[] } {
  switch (op) {
    case 'targets':
      return { program: 'wl-paste', args: ['--list-types'] };
    case 'readText':
      return { program: 'wl-paste', args: ['--no-newline', '--type', 'text'] };
    case 'readImage':
      return { program: 'wl-paste', args: ['--type', 'image/png'] };
    case 'writeText':
      return { program: 'wl-copy', args: ['--type', 'text/plain;charset=utf-8'] };
    case 'writeImage':
      return { program: 'wl-copy', args: ['--type', 'image/png'] };
  }
}

/** Which formats a list of X11 / Wayland targets (one a line) offers. */
export function parseTargets(output: string): ClipboardFormats & { readonly textTarget?: string } {
  const targets = new Set(
    output
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean),
  );
  const textTarget = TEXT_TARGETS.find((target) => targets.has(target)) ?? [...targets].find((target) => target.startsWith('text/plain'));
  return { text: textTarget !== undefined, image: targets.has('image/png'), ...(textTarget ? { textTarget } : {}) };
}

/** AppleScript lines for macOS: `info` lists the clipboard's classes, `readImage`/`writeImage` move PNG data through the file in argv. */
export function macScript(op: 'info' | 'readImage' | 'writeImage'): string[] {
  if (op === 'info') return ['clipboard info'];
  if (op === 'readImage') {
    return [
      'on run argv',
      'set f to open for access (POSIX file (item 1 of argv)) with write permission',
      'set eof f to 0',
      'write (the clipboard as «class PNGf») to f',
      'close access f',
      'end run',
    ];
  }
  return ['on run argv', 'set the clipboard to (read (POSIX file (item 1 of argv)) as «class PNGf»)', 'end run'];
}

/** Which formats `clipboard info` (AppleScript) reports. */
export function parseMacClipboardInfo(output: string): ClipboardFormats {
  return { text: /«class utf8»|string|«class ut16»/i.test(output), image: /«class PNGf»|TIFF picture|«class TIFF»/i.test(output) };
}

/** PowerShell scripts (run with `-Sta`); text through stdin/stdout as UTF-8, images through the file in `CAPNODE_CLIP_FILE`. */
export function windowsScript(op: 'formats' | 'readText' | 'readImage' | 'writeText' | 'writeImage'): string {
  const prelude = "$ErrorActionPreference = 'Stop'\n[Console]::OutputEncoding = [Text.Encoding]::UTF8\nAdd-Type -AssemblyName System.Windows.Forms\nAdd-Type -AssemblyName System.Drawing\n";
  switch (op) {
    case 'formats':
      return `${prelude}$t = [System.Windows.Forms.Clipboard]::ContainsText(); $i = [System.Windows.Forms.Clipboard]::ContainsImage()\nWrite-Output ("text=" + $t + " image=" + $i)\n`;
    case 'readText':
      return `${prelude}$t = [System.Windows.Forms.Clipboard]::GetText()\n[Console]::Out.Write($t)\n`;
    case 'readImage':
      return `${prelude}$img = [System.Windows.Forms.Clipboard]::GetImage()\nif ($null -eq $img) { exit 3 }\n$img.Save($env:CAPNODE_CLIP_FILE, [System.Drawing.Imaging.ImageFormat]::Png)\n`;
    case 'writeText':
      return `${prelude}[Console]::InputEncoding = [Text.Encoding]::UTF8\n$t = [Console]::In.ReadToEnd()\nif ($t.Length -eq 0) { [System.Windows.Forms.Clipboard]::Clear() } else { [System.Windows.Forms.Clipboard]::SetText($t) }\n`;
    case 'writeImage':
      return `${prelude}$img = [System.Drawing.Image]::FromFile($env:CAPNODE_CLIP_FILE)\n[System.Windows.Forms.Clipboard]::SetImage($img)\n$img.Dispose()\n`;
  }
}

/** A clipboard on this machine. */
export interface ClipboardBackend {
  readonly name: ClipboardBackendName;
  formats(signal?: AbortSignal): Promise<ClipboardFormats>;
  /** Text, or `undefined` when the clipboard holds none. */
  readText(signal?: AbortSignal): Promise<{ readonly text: string; readonly truncated: boolean } | undefined>;
  /** PNG bytes, or `undefined` when the clipboard holds no image. */
  readImage(signal?: AbortSignal): Promise<Buffer | undefined>;
  writeText(text: string, signal?: AbortSignal): Promise<void>;
  writeImage(png: Uint8Array, signal?: AbortSignal): Promise<void>;
}

function ensureOk(result: ToolRunResult, tool: string, action: string): ToolRunResult {
  checkRun(result, `${tool} (${action})`);
  if (result.exitCode !== 0) throw new CapabilityError('failed', `${tool} could not ${action}: ${firstLine(result.stderr, `exit code ${result.exitCode ?? result.signal}`)}`);
  return result;
}

function decodeText(result: ToolRunResult): { text: string; truncated: boolean } {
  return { text: new TextDecoder('utf-8').decode(result.stdout, { stream: result.truncated }), truncated: result.truncated };
}

async function withTempFile<T>(work: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capnode-clip-'));
  try {
    return await work(path.join(dir, 'clip.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function xclipBackend(file: string, env: NodeJS.ProcessEnv): ClipboardBackend {
  const run = (args: string[], extra: { input?: Uint8Array | string; maxStdoutBytes?: number; resolveOnExit?: boolean; signal?: AbortSignal | undefined }) =>
    runTool({ file, args, env, timeoutMs: CLIPBOARD_TIMEOUT_MS, ...extra });
  const targets = async (signal?: AbortSignal) => {
    const result = checkRun(await run(xclipArgs('targets'), { signal }), 'xclip');
    // No owner: "target TARGETS not available" (exit 1). A missing display is a real failure.
    if (result.exitCode !== 0 && /can't open display/i.test(result.stderr)) throw new CapabilityError('unavailable', `xclip cannot reach the X display: ${firstLine(result.stderr, '')}`);
    return result.exitCode === 0 ? parseTargets(result.stdout.toString('utf8')) : { text: false, image: false };
  };
  // xclip forks a server that keeps the selection (and inherits the pipes): resolve on the first process's exit.
  const write = async (data: Uint8Array | string, target: string, signal?: AbortSignal) => {
    ensureOk(await run(xclipArgs('write', target), { input: data, resolveOnExit: true, signal }), 'xclip', 'set the clipboard');
  };
  return {
    name: 'xclip',
    formats: targets,
    async readText(signal) {
      const found = await targets(signal);
      if (!found.textTarget) return undefined;
      return decodeText(ensureOk(await run(xclipArgs('read', found.textTarget), { maxStdoutBytes: MAX_CLIPBOARD_TEXT_BYTES, signal }), 'xclip', 'read the clipboard'));
    },
    async readImage(signal) {
      if (!(await targets(signal)).image) return undefined;
      return ensureOk(await run(xclipArgs('read', 'image/png'), { maxStdoutBytes: MAX_IMAGE_BYTES, signal }), 'xclip', 'read the clipboard').stdout;
    },
    writeText: (text, signal) => write(text, 'UTF8_STRING', signal),
    writeImage: (png, signal) => write(png, 'image/png', signal),
  };
}

function wlBackend(files: { copy: string; paste: string }, env: NodeJS.ProcessEnv): ClipboardBackend {
  const run = (op: Parameters<typeof wlArgs>[0], extra: { input?: Uint8Array | string; maxStdoutBytes?: number; resolveOnExit?: boolean; signal?: AbortSignal | undefined }) => {
    const { program, args } = wlArgs(op);
    return runTool({ file: program === 'wl-copy' ? files.copy : files.paste, args, env, timeoutMs: CLIPBOARD_TIMEOUT_MS, ...extra });
  };
  const formats = async (signal?: AbortSignal) => {
    const result = checkRun(await run('targets', { signal }), 'wl-paste');
    return result.exitCode === 0 ? parseTargets(result.stdout.toString('utf8')) : { text: false, image: false };
  };
  return {
    name: 'wl-clipboard',
    formats,
    async readText(signal) {
      if (!(await formats(signal)).text) return undefined;
      return decodeText(ensureOk(await run('readText', { maxStdoutBytes: MAX_CLIPBOARD_TEXT_BYTES, signal }), 'wl-paste', 'read the clipboard'));
    },
    async readImage(signal) {
      if (!(await formats(signal)).image) return undefined;
      return ensureOk(await run('readImage', { maxStdoutBytes: MAX_IMAGE_BYTES, signal }), 'wl-paste', 'read the clipboard').stdout;
    },
    async writeText(text, signal) {
      ensureOk(await run('writeText', { input: text, resolveOnExit: true, signal }), 'wl-copy', 'set the clipboard');
    },
    async writeImage(png, signal) {
      ensureOk(await run('writeImage', { input: png, resolveOnExit: true, signal }), 'wl-copy', 'set the clipboard');
    },
  };
}

function macBackend(files: { pbcopy: string; pbpaste: string; osascript: string }, env: NodeJS.ProcessEnv): ClipboardBackend {
  // pbcopy/pbpaste pick the text encoding from the locale: UTF-8 keeps non-ASCII text intact.
  const utf8Env = { ...env, LANG: 'en_US.UTF-8', LC_ALL: 'en_US.UTF-8' };
  const osascript = (op: Parameters<typeof macScript>[0], args: string[], signal?: AbortSignal) =>
    runTool({ file: files.osascript, args: [...macScript(op).flatMap((line) => ['-e', line]), ...args], env: utf8Env, timeoutMs: CLIPBOARD_TIMEOUT_MS, signal });
  const formats = async (signal?: AbortSignal) => parseMacClipboardInfo(ensureOk(await osascript('info', [], signal), 'osascript', 'inspect the clipboard').stdout.toString('utf8'));
  return {
    name: 'macos',
    formats,
    async readText(signal) {
      if (!(await formats(signal)).text) return undefined;
      const result = await runTool({ file: files.pbpaste, args: ['-Prefer', 'txt'], env: utf8Env, timeoutMs: CLIPBOARD_TIMEOUT_MS, maxStdoutBytes: MAX_CLIPBOARD_TEXT_BYTES, signal });
      return decodeText(ensureOk(result, 'pbpaste', 'read the clipboard'));
    },
    async readImage(signal) {
      if (!(await formats(signal)).image) return undefined;
      return withTempFile(async (file) => {
        ensureOk(await osascript('readImage', [file], signal), 'osascript', 'read the clipboard image');
        return readFile(file);
      });
    },
    async writeText(text, signal) {
      ensureOk(await runTool({ file: files.pbcopy, args: [], env: utf8Env, input: text, timeoutMs: CLIPBOARD_TIMEOUT_MS, signal }), 'pbcopy', 'set the clipboard');
    },
    async writeImage(png, signal) {
      await withTempFile(async (file) => {
        await writeFile(file, png);
        ensureOk(await osascript('writeImage', [file], signal), 'osascript', 'set the clipboard image');
      });
    },
  };
}

function windowsBackend(file: string, env: NodeJS.ProcessEnv): ClipboardBackend {
  const run = (op: Parameters<typeof windowsScript>[0], extra: { input?: string; env?: NodeJS.ProcessEnv; maxStdoutBytes?: number; signal?: AbortSignal | undefined } = {}) =>
    runTool({ file, args: powershellArgs(windowsScript(op)), timeoutMs: CLIPBOARD_TIMEOUT_MS, ...extra, env: { ...env, ...extra.env } });
  const formats = async (signal?: AbortSignal) => {
    const out = ensureOk(await run('formats', { signal }), 'PowerShell', 'inspect the clipboard').stdout.toString('utf8');
    return { text: /text=True/i.test(out), image: /image=True/i.test(out) };
  };
  return {
    name: 'windows',
    formats,
    async readText(signal) {
      if (!(await formats(signal)).text) return undefined;
      return decodeText(ensureOk(await run('readText', { maxStdoutBytes: MAX_CLIPBOARD_TEXT_BYTES, signal }), 'PowerShell', 'read the clipboard'));
    },
    async readImage(signal) {
      return withTempFile(async (png) => {
        const result = checkRun(await run('readImage', { env: { CAPNODE_CLIP_FILE: png }, signal }), 'PowerShell');
        if (result.exitCode === 3) return undefined;
        ensureOk(result, 'PowerShell', 'read the clipboard image');
        return readFile(png);
      });
    },
    async writeText(text, signal) {
      ensureOk(await run('writeText', { input: text, signal }), 'PowerShell', 'set the clipboard');
    },
    async writeImage(data, signal) {
      await withTempFile(async (png) => {
        await writeFile(png, data);
        ensureOk(await run('writeImage', { env: { CAPNODE_CLIP_FILE: png }, signal }), 'PowerShell', 'set the clipboard image');
      });
    },
  };
}

/** The clipboard backend for this platform and session, or `undefined` when its programs are missing. */
export async function findClipboardBackend(backend: ClipboardBackendName, options: PackEnvironment = {}): Promise<ClipboardBackend | undefined> {
  const env = envOf(options);
  if (backend === 'windows') {
    const found = await findFirst(['powershell', 'pwsh'], options);
    return found && windowsBackend(found.file, env);
  }
  if (backend === 'macos') {
    const [pbcopy, pbpaste, osascript] = await Promise.all(['pbcopy', 'pbpaste', 'osascript'].map((name) => findFirst([name], options)));
    return pbcopy && pbpaste && osascript ? macBackend({ pbcopy: pbcopy.file, pbpaste: pbpaste.file, osascript: osascript.file }, env) : undefined;
  }
  if (backend === 'wl-clipboard') {
    const [copy, paste] = await Promise.all([findFirst(['wl-copy'], options), findFirst(['wl-paste'], options)]);
    if (copy && paste) return wlBackend({ copy: copy.file, paste: paste.file }, env);
    if (!env.DISPLAY) return undefined;
  }
  const xclip = await findFirst(['xclip'], options);
  return xclip && xclipBackend(xclip.file, env);
}

/** Width and height from a PNG's IHDR chunk; `undefined` when `data` is not a PNG. */
export function pngSize(data: Uint8Array): { readonly width: number; readonly height: number } | undefined {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (data.length < 24 || signature.some((byte, index) => data[index] !== byte)) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (String.fromCharCode(...data.subarray(12, 16)) !== 'IHDR') return undefined;
  return { width: view.getUint32(16), height: view.getUint32(20) };
}
