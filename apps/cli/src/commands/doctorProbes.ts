import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { findExecutable } from '@capnode/capabilities/node';

/** Whether `host:port` can be bound now: `free`, `in-use`, or `unavailable` (the address does not exist here). */
export function probePort(host: string, port: number): Promise<'free' | 'in-use' | 'unavailable'> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' || error.code === 'EACCES' ? 'in-use' : 'unavailable'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

/** Linux: the process listening on TCP `port` (`pid 123 (node …)`), from /proc; `undefined` elsewhere or when not visible. */
export function portOwner(port: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; state 0A is LISTEN; field 9 is the socket inode.
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) {
        const command = (() => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120);
          } catch {
            return '';
          }
        })();
        return `pid ${pid}${command ? ` (${command})` : ''}`;
      }
    }
  }
  return 'a process of another user';
}

/** True when a TCP connection to the URL's host and port opens within `timeoutMs`; else why not. */
export function tcpReachable(url: string, timeoutMs: number): Promise<true | string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve('not a valid URL');
  }
  const port = Number(parsed.port || (parsed.protocol === 'wss:' || parsed.protocol === 'https:' ? 443 : 80));
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (result: true | string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'connection refused (nothing listens there)' : error.message));
  });
}

/** A program a capability pack command needs, and what to install when it is missing. */
interface Backend {
  readonly name: string;
  readonly title: string;
  /** Any one of these programs will do. */
  readonly programs: readonly string[];
  readonly install: string;
}

const LINUX_BACKENDS: readonly Backend[] = [
  { name: 'ffmpeg', title: 'camera/screen recording (ffmpeg)', programs: ['ffmpeg'], install: 'install ffmpeg (Debian/Ubuntu: sudo apt install ffmpeg)' },
  { name: 'clipboard', title: 'clipboard (xclip or wl-copy)', programs: ['xclip', 'wl-copy'], install: 'install xclip (X11) or wl-clipboard (Wayland): sudo apt install xclip wl-clipboard' },
  { name: 'tts', title: 'text to speech (espeak-ng)', programs: ['espeak-ng'], install: 'sudo apt install espeak-ng' },
  { name: 'stt', title: 'speech to text (pocketsphinx_continuous)', programs: ['pocketsphinx_continuous'], install: 'sudo apt install pocketsphinx' },
  { name: 'notify', title: 'desktop notifications (notify-send)', programs: ['notify-send'], install: 'sudo apt install libnotify-bin' },
  { name: 'location', title: 'location (where-am-i, GeoClue)', programs: ['where-am-i', '/usr/libexec/geoclue-2.0/demos/where-am-i'], install: 'sudo apt install geoclue-2-demo' },
];

const OTHER_BACKENDS: readonly Backend[] = [LINUX_BACKENDS[0]!];

/** Backends that are programs only, not a plugin of the pack whose availability the host reports itself. */
const PROGRAM_ONLY = new Set(['ffmpeg', 'notify']);

/** One backend as doctor reports it: where it was found, or what is missing and what to install. */
export interface BackendCheck {
  readonly name: string;
  readonly title: string;
  readonly found?: string;
  /** What is missing, when not just the program (e.g. "DISPLAY is not set"). */
  readonly missing?: string;
  readonly install: string;
}

/** The clipboard as the pack's own probe sees it, so doctor never calls ok what `status` calls unavailable. */
async function clipboardCheck(env: Readonly<Record<string, string | undefined>>): Promise<BackendCheck> {
  const { probeClipboard } = await import('@capnode/capabilities/pack');
  const title = 'clipboard (xclip or wl-copy, and a display)';
  const found = await probeClipboard({ env: env as NodeJS.ProcessEnv });
  if (found.available) return { name: 'clipboard', title, found: 'available', install: '' };
  return { name: 'clipboard', title, missing: `unavailable: needs ${found.install}`, install: `install ${found.install}` };
}

/**
 * Each capability backend and where it was found (`found` absent: missing; its commands say
 * "unavailable here"). `programs` checks only what no plugin reports (ffmpeg, notify-send): a running
 * host's status covers the rest.
 */
export async function checkBackends(env: Readonly<Record<string, string | undefined>>, which: 'all' | 'programs' = 'all'): Promise<BackendCheck[]> {
  const list = (process.platform === 'linux' ? LINUX_BACKENDS : OTHER_BACKENDS).filter((backend) => which === 'all' || PROGRAM_ONLY.has(backend.name));
  return Promise.all(
    list.map(async (backend): Promise<BackendCheck> => {
      if (backend.name === 'clipboard') return clipboardCheck(env);
      let found: string | undefined;
      for (const program of backend.programs) {
        found = await findExecutable(program, { env: env as NodeJS.ProcessEnv });
        if (found) break;
      }
      return { name: backend.name, title: backend.title, install: backend.install, ...(found ? { found } : {}) };
    }),
  );
}
