import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Capability } from '@capnode/capabilities';
import { settingsSchema } from '@capnode/host/settings';
import { startTestHost, type TestHost } from '../support/testHost.js';

/** Whether a program is on PATH (tests skip with the reason otherwise). */
export function hasProgram(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Whether the host's settings know `consent` (the plugins work's consent hook is merged). */
export function hostHasConsent(): boolean {
  const shape = (settingsSchema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  return 'consent' in shape;
}

/**
 * `consent: allow` for the media categories, when the host's settings know `consent` (the consent
 * hook of the plugins work); before that, the key would be refused as unknown, and nothing gates.
 */
export function consentAllowSettings(): Record<string, unknown> {
  return hostHasConsent() ? { consent: { screen: 'allow', camera: 'allow', microphone: 'allow' } } : {};
}

/** A real host on 127.0.0.1 with `capabilities` registered and media consent allowed, and an SDK v2 client. */
export function startMediaHost(capabilities: readonly Capability[], settings: Record<string, unknown> = {}): Promise<TestHost> {
  return startTestHost({ settings: { ...consentAllowSettings(), ...settings }, host: { capabilities } });
}

/** The full `tools/call` result of an MCP call. */
export interface RawToolResult {
  readonly isError?: boolean;
  readonly content: { type: string; text?: string; data?: string; mimeType?: string; resource?: { uri: string; mimeType?: string; blob?: string } }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly _meta?: Record<string, unknown>;
}

export async function callRaw(host: TestHost, name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; onprogress?: (update: unknown) => void } = {}): Promise<RawToolResult> {
  return (await host.client.callTool({ name, arguments: args }, options)) as unknown as RawToolResult;
}

/** The failure code of an `isError` result (`_meta["capnode/failure"].code`). */
export function failureCode(result: RawToolResult): string | undefined {
  return (result._meta?.['capnode/failure'] as { code?: string } | undefined)?.code;
}

/** What ffprobe says about a media file: duration, and each stream's codec, type, size and frame rate. */
export interface ProbeResult {
  readonly durationS: number;
  readonly streams: { codec_type: string; codec_name: string; width?: number; height?: number; avg_frame_rate?: string; nb_frames?: string }[];
}

export function ffprobe(data: Buffer, dir: string): ProbeResult {
  const file = join(dir, `probe-${Date.now()}.mp4`);
  writeFileSync(file, data);
  const result = spawnSync('ffprobe', ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ffprobe failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { format: { duration: string }; streams: ProbeResult['streams'] };
  return { durationS: Number(parsed.format.duration), streams: parsed.streams };
}

/** Frames per second from ffprobe's `a/b` rate. */
export function rate(value: string | undefined): number {
  const [a, b] = (value ?? '0/1').split('/').map(Number);
  return (a ?? 0) / (b || 1);
}

/** Pids of running processes whose command line contains every one of `needles`. */
export function processesMatching(...needles: string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/^\d+ \(.*\) Z/s.test(stat)) continue;
      if (needles.every((needle) => cmdline.includes(needle))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** Decodes a PNG (8-bit RGB, filter 0 or any) back to pixels with ffmpeg, for assertions. */
export function decodeToRgb(data: Buffer, width: number, height: number): Buffer {
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { input: data, maxBuffer: width * height * 3 + 1024 });
  if (result.status !== 0) throw new Error(`ffmpeg decode failed: ${result.stderr.toString()}`);
  return result.stdout;
}
