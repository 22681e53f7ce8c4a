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

/** Each capability backend and where it was found (`found` absent: missing; its commands say "unavailable here"). */
export async function checkBackends(env: Readonly<Record<string, string | undefined>>): Promise<{ name: string; title: string; found?: string; install: string }[]> {
  return Promise.all(
    (process.platform === 'linux' ? LINUX_BACKENDS : OTHER_BACKENDS).map(async (backend) => {
      let found: string | undefined;
      for (const program of backend.programs) {
        found = await findExecutable(program, { env: env as NodeJS.ProcessEnv });
        if (found) break;
      }
      return { name: backend.name, title: backend.title, install: backend.install, ...(found ? { found } : {}) };
    }),
  );
}
