/**
 * Argument builders and output parsers of the screen backends, per platform. Pure functions, so
 * the macOS and Windows backends are tested here on any machine.
 */

/** A screen in virtual-desktop coordinates. */
export interface ScreenRect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** One entry of `screen.list`. */
export interface ScreenInfo extends ScreenRect {
  readonly index: number;
  readonly name: string;
  readonly primary: boolean;
}

/** Where a recording's audio comes from, as ffmpeg input arguments (`-f pulse -i default`). */
export type AudioInput = readonly string[] | undefined;

export interface RecordArgsOptions {
  readonly fps: number;
  readonly durationMs: number;
  readonly output: string;
  readonly audio?: AudioInput;
  readonly drawPointer?: boolean;
}

/** ffmpeg output arguments shared by every recording: H.264 (even dimensions) + AAC in a faststart mp4. */
export function mp4OutputArgs(options: { readonly fps: number; readonly durationMs: number; readonly output: string; readonly hasAudio: boolean }): string[] {
  return [
    '-t',
    (options.durationMs / 1000).toFixed(3),
    '-vf',
    'scale=trunc(iw/2)*2:trunc(ih/2)*2',
    '-r',
    String(options.fps),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    ...(options.hasAudio ? ['-c:a', 'aac', '-b:a', '128k'] : []),
    '-movflags',
    '+faststart',
    '-y',
    options.output,
  ];
}

const COMMON = ['-hide_banner', '-nostdin', '-loglevel', 'error'];

/** Linux: ffmpeg `x11grab` of one screen's rectangle of `display` (e.g. `:0`), with optional pulse audio. */
export function x11grabRecordArgs(display: string, rect: ScreenRect, options: RecordArgsOptions): string[] {
  return [
    ...COMMON,
    '-f',
    'x11grab',
    '-draw_mouse',
    options.drawPointer === false ? '0' : '1',
    '-framerate',
    String(options.fps),
    '-video_size',
    `${rect.width}x${rect.height}`,
    '-i',
    `${display}+${rect.x},${rect.y}`,
    ...(options.audio ?? []),
    ...mp4OutputArgs({ ...options, hasAudio: options.audio !== undefined }),
  ];
}

/** PulseAudio's default source as ffmpeg input arguments. */
export const PULSE_AUDIO_INPUT: readonly string[] = ['-f', 'pulse', '-i', 'default'];

/** macOS: `screencapture` of display `index` (0-based) to `file`, silent, optionally with the pointer. */
export function screencaptureArgs(options: { readonly index: number; readonly format: 'png' | 'jpeg'; readonly includePointer: boolean; readonly file: string }): string[] {
  return ['-x', ...(options.includePointer ? ['-C'] : []), '-t', options.format === 'png' ? 'png' : 'jpg', '-D', String(options.index + 1), options.file];
}

/** macOS: `sips` arguments that shrink `file` to `width` and set JPEG quality (1..100), in place. */
export function sipsArgs(options: { readonly file: string; readonly width?: number | undefined; readonly jpegQuality?: number | undefined }): string[] {
  return [
    ...(options.width !== undefined ? ['--resampleWidth', String(options.width)] : []),
    ...(options.jpegQuality !== undefined ? ['-s', 'formatOptions', String(options.jpegQuality)] : []),
    options.file,
  ];
}

/** One device of `ffmpeg -f avfoundation -list_devices true -i ""`. */
export interface AvfoundationDevice {
  readonly index: number;
  readonly name: string;
}

/** Parses ffmpeg's avfoundation device listing (stderr) into video and audio devices. */
export function parseAvfoundationDevices(stderr: string): { video: AvfoundationDevice[]; audio: AvfoundationDevice[] } {
  const video: AvfoundationDevice[] = [];
  const audio: AvfoundationDevice[] = [];
  let list: AvfoundationDevice[] | undefined;
  for (const line of stderr.split(/\r?\n/)) {
    if (/AVFoundation video devices/i.test(line)) list = video;
    else if (/AVFoundation audio devices/i.test(line)) list = audio;
    else {
      const match = /\]\s*\[(\d+)\]\s*(.+?)\s*$/.exec(line);
      if (match && list) list.push({ index: Number(match[1]), name: match[2]! });
    }
  }
  return { video, audio };
}

/** macOS: ffmpeg avfoundation recording of the screen device `screenDevice` ("Capture screen N"). */
export function avfoundationRecordArgs(screenDevice: number, options: RecordArgsOptions & { readonly audioDevice?: number | undefined }): string[] {
  const hasAudio = options.audioDevice !== undefined;
  return [
    ...COMMON,
    '-f',
    'avfoundation',
    '-capture_cursor',
    options.drawPointer === false ? '0' : '1',
    '-framerate',
    String(options.fps),
    '-i',
    `${screenDevice}:${hasAudio ? options.audioDevice : 'none'}`,
    ...mp4OutputArgs({ ...options, hasAudio }),
  ];
}

/** Parses `system_profiler SPDisplaysDataType -json` into screens (main display first, as screencapture numbers them). */
export function parseMacDisplays(json: string): ScreenInfo[] {
  const parsed = JSON.parse(json) as { SPDisplaysDataType?: { spdisplays_ndrvs?: Record<string, unknown>[] }[] };
  const displays = (parsed.SPDisplaysDataType ?? []).flatMap((gpu) => gpu.spdisplays_ndrvs ?? []);
  const screens = displays.map((display) => {
    const resolution = String(display._spdisplays_resolution ?? display.spdisplays_resolution ?? '');
    const pixels = String(display._spdisplays_pixels ?? '');
    const size = /(\d+)\s*x\s*(\d+)/.exec(resolution) ?? /(\d+)\s*x\s*(\d+)/.exec(pixels);
    return {
      name: String(display._name ?? 'Display'),
      primary: display.spdisplays_main === 'spdisplays_yes',
      x: 0,
      y: 0,
      width: size ? Number(size[1]) : 0,
      height: size ? Number(size[2]) : 0,
    };
  });
  screens.sort((a, b) => Number(b.primary) - Number(a.primary));
  return screens.map((screen, index) => ({ index, ...screen }));
}

/** Windows: PowerShell listing every screen as JSON (`System.Windows.Forms.Screen`). */
export const WINDOWS_LIST_SCRIPT = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Windows.Forms
$i = 0
@([System.Windows.Forms.Screen]::AllScreens | ForEach-Object { [pscustomobject]@{ index = $i; name = $_.DeviceName; primary = $_.Primary; x = $_.Bounds.X; y = $_.Bounds.Y; width = $_.Bounds.Width; height = $_.Bounds.Height }; $i++ }) | ConvertTo-Json -Compress
`;

/**
 * Windows: PowerShell (System.Drawing / GDI) capturing one screen to a file. Parameters come
 * through the environment (CAPNODE_SCREEN_*), never through the script text; prints `{ width, height }`.
 */
export const WINDOWS_SNAPSHOT_SCRIPT = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Windows.Forms
Add-Type -AssemblyName System.Drawing
$screens = [System.Windows.Forms.Screen]::AllScreens
$index = [int]$env:CAPNODE_SCREEN_INDEX
if ($index -ge $screens.Length) { [Console]::Error.WriteLine("screenIndex out of range"); exit 3 }
$b = $screens[$index].Bounds
$bitmap = New-Object System.Drawing.Bitmap $b.Width, $b.Height
$g = [System.Drawing.Graphics]::FromImage($bitmap)
$g.CopyFromScreen($b.Location, [System.Drawing.Point]::Empty, $b.Size)
if ($env:CAPNODE_SCREEN_POINTER -eq '1') {
  $p = [System.Windows.Forms.Cursor]::Position
  [System.Windows.Forms.Cursors]::Default.Draw($g, (New-Object System.Drawing.Rectangle ($p.X - $b.X), ($p.Y - $b.Y), 32, 32))
}
$g.Dispose()
$w = $b.Width; $h = $b.Height
$max = [int]$env:CAPNODE_SCREEN_MAX_WIDTH
if ($max -gt 0 -and $w -gt $max) {
  $h = [int][Math]::Max(1, [Math]::Round($h * $max / $w)); $w = $max
  $scaled = New-Object System.Drawing.Bitmap $w, $h
  $sg = [System.Drawing.Graphics]::FromImage($scaled)
  $sg.InterpolationMode = [System.Drawing.Drawing2D.InterpolationMode]::HighQualityBicubic
  $sg.DrawImage($bitmap, 0, 0, $w, $h)
  $sg.Dispose(); $bitmap.Dispose(); $bitmap = $scaled
}
if ($env:CAPNODE_SCREEN_FORMAT -eq 'jpeg') {
  $codec = [System.Drawing.Imaging.ImageCodecInfo]::GetImageEncoders() | Where-Object { $_.MimeType -eq 'image/jpeg' }
  $params = New-Object System.Drawing.Imaging.EncoderParameters 1
  $params.Param[0] = New-Object System.Drawing.Imaging.EncoderParameter ([System.Drawing.Imaging.Encoder]::Quality), ([long]$env:CAPNODE_SCREEN_QUALITY)
  $bitmap.Save($env:CAPNODE_SCREEN_FILE, $codec, $params)
} else {
  $bitmap.Save($env:CAPNODE_SCREEN_FILE, [System.Drawing.Imaging.ImageFormat]::Png)
}
$bitmap.Dispose()
[pscustomobject]@{ width = $w; height = $h } | ConvertTo-Json -Compress
`;

/** PowerShell arguments running `script` (UTF-16LE base64, so no quoting can break it). */
export function powershellArgs(script: string): string[] {
  return ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', Buffer.from(script, 'utf16le').toString('base64')];
}

/** The environment of {@link WINDOWS_SNAPSHOT_SCRIPT}. */
export function windowsSnapshotEnv(options: { readonly index: number; readonly format: 'png' | 'jpeg'; readonly quality: number; readonly maxWidth?: number | undefined; readonly includePointer: boolean; readonly file: string }): Record<string, string> {
  return {
    CAPNODE_SCREEN_INDEX: String(options.index),
    CAPNODE_SCREEN_FORMAT: options.format,
    CAPNODE_SCREEN_QUALITY: String(Math.round(options.quality * 100)),
    CAPNODE_SCREEN_MAX_WIDTH: String(options.maxWidth ?? 0),
    CAPNODE_SCREEN_POINTER: options.includePointer ? '1' : '0',
    CAPNODE_SCREEN_FILE: options.file,
  };
}

/** Parses {@link WINDOWS_LIST_SCRIPT}'s output (one object or an array). */
export function parseWindowsScreens(json: string): ScreenInfo[] {
  const parsed = JSON.parse(json.trim() || '[]') as unknown;
  const list = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
  return list.map((screen, index) => ({
    index,
    name: String(screen.name ?? `Display ${index + 1}`).replace(/^\\\\\.\\/, ''),
    primary: screen.primary === true,
    x: Number(screen.x ?? 0),
    y: Number(screen.y ?? 0),
    width: Number(screen.width ?? 0),
    height: Number(screen.height ?? 0),
  }));
}

/** Windows: ffmpeg `gdigrab` of one screen's rectangle of the virtual desktop, with optional dshow audio. */
export function gdigrabRecordArgs(rect: ScreenRect, options: RecordArgsOptions & { readonly audioDevice?: string | undefined }): string[] {
  const hasAudio = options.audioDevice !== undefined;
  return [
    ...COMMON,
    '-f',
    'gdigrab',
    '-draw_mouse',
    options.drawPointer === false ? '0' : '1',
    '-framerate',
    String(options.fps),
    '-offset_x',
    String(rect.x),
    '-offset_y',
    String(rect.y),
    '-video_size',
    `${rect.width}x${rect.height}`,
    '-i',
    'desktop',
    ...(hasAudio ? ['-f', 'dshow', '-i', `audio=${options.audioDevice}`] : []),
    ...mp4OutputArgs({ ...options, hasAudio }),
  ];
}

/** One device of `ffmpeg -f dshow -list_devices true -i dummy`. */
export interface DshowDevice {
  readonly name: string;
  readonly kind: 'video' | 'audio';
  readonly alternativeName?: string;
}

/** Parses ffmpeg's DirectShow device listing (stderr), old (section headers) and new (`(video)` suffix) styles. */
export function parseDshowDevices(stderr: string): DshowDevice[] {
  const devices: DshowDevice[] = [];
  let section: 'video' | 'audio' | undefined;
  for (const line of stderr.split(/\r?\n/)) {
    if (/DirectShow video devices/i.test(line)) section = 'video';
    else if (/DirectShow audio devices/i.test(line)) section = 'audio';
    const alternative = /Alternative name\s+"(.+)"/.exec(line);
    if (alternative) {
      const last = devices.pop();
      if (last) devices.push({ ...last, alternativeName: alternative[1]! });
      continue;
    }
    const match = /\]\s+"(.+)"(?:\s+\((video|audio|none)\))?/.exec(line);
    if (!match) continue;
    const kind = (match[2] as 'video' | 'audio' | 'none' | undefined) ?? section;
    if (kind === 'video' || kind === 'audio') devices.push({ name: match[1]!, kind });
  }
  return devices;
}
