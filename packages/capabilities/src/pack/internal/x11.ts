import { readFile } from 'node:fs/promises';
import { hostname, homedir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { CapabilityError } from '../../errors.js';

export type { X11Address } from './x11Display.js';
export { parseDisplay } from './x11Display.js';
import { parseDisplay, type X11Address } from './x11Display.js';

/** One entry of an Xauthority file. */
export interface XauthEntry {
  readonly family: number;
  readonly address: Buffer;
  readonly number: string;
  readonly name: string;
  readonly data: Buffer;
}

/** Parses an Xauthority file (big-endian length-prefixed fields). */
export function parseXauthority(file: Buffer): XauthEntry[] {
  const entries: XauthEntry[] = [];
  let at = 0;
  const field = (): Buffer | undefined => {
    if (at + 2 > file.length) return undefined;
    const length = file.readUInt16BE(at);
    if (at + 2 + length > file.length) return undefined;
    const value = file.subarray(at + 2, at + 2 + length);
    at += 2 + length;
    return value;
  };
  while (at + 2 <= file.length) {
    const family = file.readUInt16BE(at);
    at += 2;
    const address = field();
    const number = field();
    const name = field();
    const data = field();
    if (!address || !number || !name || !data) break;
    entries.push({ family, address, number: number.toString('latin1'), name: name.toString('latin1'), data });
  }
  return entries;
}

const FAMILY_LOCAL = 256;
const FAMILY_WILD = 65535;
const FAMILY_INTERNET = 0;

/** Picks the MIT-MAGIC-COOKIE-1 entry for a display, as libXau does (local host name, or a wildcard). */
export function pickXauthEntry(entries: readonly XauthEntry[], address: X11Address, localHost = hostname()): XauthEntry | undefined {
  return entries.find((entry) => {
    if (entry.name !== 'MIT-MAGIC-COOKIE-1') return false;
    if (entry.number !== '' && entry.number !== String(address.display)) return false;
    if (entry.family === FAMILY_WILD) return true;
    if (address.kind === 'unix') return entry.family === FAMILY_LOCAL && entry.address.toString('latin1') === localHost;
    if (entry.family === FAMILY_LOCAL) return address.host === 'localhost' && entry.address.toString('latin1') === localHost;
    return entry.family === FAMILY_INTERNET && entry.address.join('.') === address.host;
  });
}

/** A visual's colour masks (TrueColor), enough to decode ZPixmap pixels. */
export interface X11Visual {
  readonly id: number;
  readonly class: number;
  readonly redMask: number;
  readonly greenMask: number;
  readonly blueMask: number;
}

/** One screen of the display (a root window). */
export interface X11Screen {
  readonly root: number;
  readonly width: number;
  readonly height: number;
  readonly rootDepth: number;
  readonly rootVisual: number;
  readonly visuals: ReadonlyMap<number, X11Visual>;
}

/** What the server said at connection setup that image decoding needs. */
export interface X11Setup {
  readonly vendor: string;
  /** 0 LSBFirst (little-endian), 1 MSBFirst. */
  readonly imageByteOrder: number;
  /** depth → bits per pixel and scanline pad of ZPixmap images. */
  readonly formats: ReadonlyMap<number, { readonly bitsPerPixel: number; readonly scanlinePad: number }>;
  readonly screens: readonly X11Screen[];
}

/** Parses the additional data of a successful setup reply (the bytes after its 8-byte header). */
export function parseSetup(data: Buffer): X11Setup {
  const vendorLength = data.readUInt16LE(16);
  const screenCount = data.readUInt8(20);
  const formatCount = data.readUInt8(21);
  const imageByteOrder = data.readUInt8(22);
  let at = 32;
  const vendor = data.toString('latin1', at, at + vendorLength);
  at += pad4(vendorLength);
  const formats = new Map<number, { bitsPerPixel: number; scanlinePad: number }>();
  for (let i = 0; i < formatCount; i++, at += 8) formats.set(data.readUInt8(at), { bitsPerPixel: data.readUInt8(at + 1), scanlinePad: data.readUInt8(at + 2) });
  const screens: X11Screen[] = [];
  for (let s = 0; s < screenCount; s++) {
    const root = data.readUInt32LE(at);
    const width = data.readUInt16LE(at + 20);
    const height = data.readUInt16LE(at + 22);
    const rootVisual = data.readUInt32LE(at + 32);
    const rootDepth = data.readUInt8(at + 38);
    const depthCount = data.readUInt8(at + 39);
    at += 40;
    const visuals = new Map<number, X11Visual>();
    for (let d = 0; d < depthCount; d++) {
      const visualCount = data.readUInt16LE(at + 2);
      at += 8;
      for (let v = 0; v < visualCount; v++, at += 24) {
        const id = data.readUInt32LE(at);
        visuals.set(id, { id, class: data.readUInt8(at + 4), redMask: data.readUInt32LE(at + 8), greenMask: data.readUInt32LE(at + 12), blueMask: data.readUInt32LE(at + 16) });
      }
    }
    screens.push({ root, width, height, rootDepth, rootVisual, visuals });
  }
  return { vendor, imageByteOrder, formats, screens };
}

/** A ZPixmap image as the server sent it, with what it takes to decode its pixels. */
export interface X11Image {
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly bitsPerPixel: number;
  readonly bytesPerLine: number;
  readonly littleEndian: boolean;
  readonly redMask: number;
  readonly greenMask: number;
  readonly blueMask: number;
  readonly data: Buffer;
}

/** A RandR monitor (RRGetMonitors), in root-window coordinates. */
export interface X11Monitor {
  readonly name: string;
  readonly primary: boolean;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The pointer image (XFIXES GetCursorImage): premultiplied ARGB, `x`/`y` being the hotspot's position. */
export interface X11Cursor {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly xhot: number;
  readonly yhot: number;
  readonly argb: Uint32Array;
}

/** Per-request options: aborting fails the request `cancelled` and closes the connection. */
export interface X11RequestOptions {
  readonly signal?: AbortSignal | undefined;
}

/** A connection to an X server speaking just what screenshots need. */
export interface X11Client extends AsyncDisposable {
  readonly setup: X11Setup;
  /** The screen `$DISPLAY` names (`:0.<n>`), falling back to the first. */
  readonly screen: X11Screen;
  /** GetImage (ZPixmap, all planes) of a rectangle of the root window. */
  getImage(rect: { x: number; y: number; width: number; height: number }, options?: X11RequestOptions): Promise<X11Image>;
  /** RandR 1.5 monitors; `undefined` when the server has no RandR 1.5. */
  getMonitors(options?: X11RequestOptions): Promise<X11Monitor[] | undefined>;
  /** The pointer image; `undefined` when the server has no XFIXES 4. */
  getCursor(options?: X11RequestOptions): Promise<X11Cursor | undefined>;
  /** True once the connection is closed or broken; a cached client is then replaced. */
  readonly closed: boolean;
  /** Lets the process exit while the connection is idle (a cached client). */
  unref(): void;
  close(): Promise<void>;
}

export interface ConnectX11Options {
  /** `$DISPLAY`-style name. */
  readonly display: string;
  /** Xauthority file; default `$XAUTHORITY`, else `~/.Xauthority` (missing means no auth). */
  readonly xauthority?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Connection and per-request deadline. Default 10 s. */
  readonly timeoutMs?: number;
}

function pad4(n: number): number {
  return (n + 3) & ~3;
}

interface PendingReply {
  readonly resolve: (reply: Buffer) => void;
  readonly reject: (error: Error) => void;
}

const X11_ERROR_NAMES: Record<number, string> = { 1: 'BadRequest', 2: 'BadValue', 3: 'BadWindow', 8: 'BadMatch', 9: 'BadDrawable', 11: 'BadAlloc', 16: 'BadLength', 17: 'BadImplementation' };

async function readCookie(address: X11Address, file: string | undefined): Promise<XauthEntry | undefined> {
  const path = file ?? join(homedir(), '.Xauthority');
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch {
    return undefined;
  }
  return pickXauthEntry(parseXauthority(content), address);
}

function setupRequest(cookie: XauthEntry | undefined): Buffer {
  const name = cookie ? Buffer.from(cookie.name, 'latin1') : Buffer.alloc(0);
  const data = cookie?.data ?? Buffer.alloc(0);
  const request = Buffer.alloc(12 + pad4(name.length) + pad4(data.length));
  request.write('l', 0, 'latin1');
  request.writeUInt16LE(11, 2);
  request.writeUInt16LE(0, 4);
  request.writeUInt16LE(name.length, 6);
  request.writeUInt16LE(data.length, 8);
  name.copy(request, 12);
  data.copy(request, 12 + pad4(name.length));
  return request;
}

/**
 * Connects to the X server of `display` over its socket (with the Xauthority cookie when there is
 * one) and completes the setup handshake. Requests are sent one at a time, replies matched by sequence.
 *
 * @throws CapabilityError `unavailable` when the display cannot be reached or refuses the connection.
 */
export async function connectX11(options: ConnectX11Options): Promise<X11Client> {
  const address = parseDisplay(options.display);
  if (!address) throw new CapabilityError('unavailable', `unavailable here: DISPLAY "${options.display}" is not an X11 display name.`);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const cookie = await readCookie(address, options.xauthority ?? process.env.XAUTHORITY);
  const socket = address.kind === 'unix' ? net.connect(address.path) : net.connect(address.port, address.host);
  socket.setNoDelay(true);

  let buffer: Buffer = Buffer.alloc(0);
  let setupWaiter: PendingReply | undefined;
  let setupDone = false;
  let sequence = 0;
  let closedError: Error | undefined;
  const pending = new Map<number, PendingReply>();

  const failAll = (error: Error) => {
    closedError ??= error;
    setupWaiter?.reject(error);
    setupWaiter = undefined;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  const consume = () => {
    for (;;) {
      if (!setupDone) {
        if (buffer.length < 8) return;
        const total = 8 + buffer.readUInt16LE(6) * 4;
        if (buffer.length < total) return;
        const packet = buffer.subarray(0, total);
        buffer = buffer.subarray(total);
        setupDone = true;
        setupWaiter?.resolve(packet);
        setupWaiter = undefined;
        continue;
      }
      if (buffer.length < 32) return;
      const kind = buffer.readUInt8(0);
      const total = kind === 1 ? 32 + buffer.readUInt32LE(4) * 4 : 32;
      if (buffer.length < total) return;
      // Copy out of the receive buffer only when the reply is shorter than what is buffered.
      const packet = buffer.length === total ? buffer : Buffer.from(buffer.subarray(0, total));
      buffer = buffer.length === total ? Buffer.alloc(0) : buffer.subarray(total);
      if (kind > 1) continue; // An event: screenshots select none, but the server may send some.
      const seq = packet.readUInt16LE(2);
      const waiter = pending.get(seq);
      if (!waiter) continue;
      pending.delete(seq);
      if (kind === 1) waiter.resolve(packet);
      else {
        const code = packet.readUInt8(1);
        const error = new CapabilityError('failed', `The X server refused a request: ${X11_ERROR_NAMES[code] ?? `error ${code}`} (request ${packet.readUInt8(10)}.${packet.readUInt16LE(8)}).`);
        (error as { x11Code?: number }).x11Code = code;
        waiter.reject(error);
      }
    }
  };
  const chunks: Buffer[] = [];
  let chunkBytes = 0;
  let need = 8;
  socket.on('data', (chunk: Buffer) => {
    // Large replies (an 8 MB GetImage) arrive in many chunks: gather them and concatenate once.
    chunks.push(chunk);
    chunkBytes += chunk.length;
    if (buffer.length + chunkBytes < need) return;
    buffer = buffer.length === 0 && chunks.length === 1 ? chunks[0]! : Buffer.concat([buffer, ...chunks]);
    chunks.length = 0;
    chunkBytes = 0;
    consume();
    need = nextNeed();
  });
  const nextNeed = (): number => {
    if (!setupDone) return buffer.length < 8 ? 8 : 8 + buffer.readUInt16LE(6) * 4;
    if (buffer.length < 32) return 32;
    return buffer.readUInt8(0) === 1 ? 32 + buffer.readUInt32LE(4) * 4 : 32;
  };
  socket.on('error', (error) => failAll(new CapabilityError('unavailable', `unavailable here: cannot reach the X display ${options.display}: ${error.message}`, { cause: error })));
  socket.on('close', () => failAll(new CapabilityError('failed', `The X display ${options.display} closed the connection.`)));

  const withDeadline = <T>(promise: Promise<T>, what: string, signal: AbortSignal | undefined = options.signal): Promise<T> => {
    if (signal?.aborted) return Promise.reject(new CapabilityError('cancelled', 'The screenshot was cancelled.'));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new CapabilityError('timeout', `The X display ${options.display} did not answer ${what} within ${timeoutMs / 1000} s.`));
        socket.destroy();
      }, timeoutMs);
      const onAbort = () => {
        reject(new CapabilityError('cancelled', 'The screenshot was cancelled.'));
        socket.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  };

  const setupReply = await withDeadline(
    new Promise<Buffer>((resolve, reject) => {
      setupWaiter = { resolve, reject };
      socket.write(setupRequest(cookie));
    }),
    'the connection setup',
  ).catch((error: unknown) => {
    socket.destroy();
    throw error;
  });
  const status = setupReply.readUInt8(0);
  if (status !== 1) {
    socket.destroy();
    const reason = setupReply.toString('latin1', 8, 8 + setupReply.readUInt8(1)).trim() || (status === 2 ? 'authentication required' : 'refused');
    throw new CapabilityError('unavailable', `unavailable here: the X display ${options.display} refused the connection (${reason}); set XAUTHORITY to the display's cookie file.`);
  }
  const setup = parseSetup(setupReply.subarray(8));
  const screen = setup.screens[address.screen] ?? setup.screens[0];
  if (!screen) {
    socket.destroy();
    throw new CapabilityError('unavailable', `unavailable here: the X display ${options.display} has no screen.`);
  }

  const request = (bytes: Buffer, what: string, signal?: AbortSignal): Promise<Buffer> => {
    if (closedError) return Promise.reject(closedError);
    sequence = (sequence + 1) & 0xffff;
    const seq = sequence;
    socket.write(bytes);
    return withDeadline(new Promise<Buffer>((resolve, reject) => pending.set(seq, { resolve, reject })), what, signal);
  };

  const extensions = new Map<string, Promise<number | undefined>>();
  const queryExtension = (name: string): Promise<number | undefined> => {
    let known = extensions.get(name);
    if (!known) {
      const nameBytes = Buffer.from(name, 'latin1');
      const bytes = Buffer.alloc(8 + pad4(nameBytes.length));
      bytes.writeUInt8(98, 0);
      bytes.writeUInt16LE(bytes.length / 4, 2);
      bytes.writeUInt16LE(nameBytes.length, 4);
      nameBytes.copy(bytes, 8);
      known = request(bytes, `QueryExtension ${name}`).then((reply) => (reply.readUInt8(8) === 1 ? reply.readUInt8(9) : undefined));
      extensions.set(name, known);
    }
    return known;
  };
  const versionRequest = (major: number, minor: number, wantMajor: number, wantMinor: number): Buffer => {
    const bytes = Buffer.alloc(12);
    bytes.writeUInt8(major, 0);
    bytes.writeUInt8(minor, 1);
    bytes.writeUInt16LE(3, 2);
    bytes.writeUInt32LE(wantMajor, 4);
    bytes.writeUInt32LE(wantMinor, 8);
    return bytes;
  };
  const atomNames = new Map<number, string>();
  const atomName = async (atom: number): Promise<string> => {
    if (atom === 0) return '';
    const known = atomNames.get(atom);
    if (known !== undefined) return known;
    const bytes = Buffer.alloc(8);
    bytes.writeUInt8(17, 0);
    bytes.writeUInt16LE(2, 2);
    bytes.writeUInt32LE(atom, 4);
    const reply = await request(bytes, 'GetAtomName');
    const name = reply.toString('latin1', 32, 32 + reply.readUInt16LE(8));
    atomNames.set(atom, name); // Atoms never change meaning while the server runs.
    return name;
  };

  let randr15: Promise<boolean> | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.once('close', () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 1_000).unref();
    });
  };

  return {
    setup,
    screen,
    get closed() {
      return closed || closedError !== undefined || socket.destroyed;
    },
    unref: () => void socket.unref(),
    async getImage(rect, requestOptions) {
      const bytes = Buffer.alloc(20);
      bytes.writeUInt8(73, 0);
      bytes.writeUInt8(2, 1); // ZPixmap
      bytes.writeUInt16LE(5, 2);
      bytes.writeUInt32LE(screen.root, 4);
      bytes.writeInt16LE(rect.x, 8);
      bytes.writeInt16LE(rect.y, 10);
      bytes.writeUInt16LE(rect.width, 12);
      bytes.writeUInt16LE(rect.height, 14);
      bytes.writeUInt32LE(0xffffffff, 16);
      const reply = await request(bytes, 'GetImage', requestOptions?.signal);
      const depth = reply.readUInt8(1);
      const visual = screen.visuals.get(reply.readUInt32LE(8)) ?? screen.visuals.get(screen.rootVisual);
      const format = setup.formats.get(depth);
      if (!visual || !format) throw new CapabilityError('unsupported', `The X display uses a pixel format capnode cannot decode (depth ${depth}).`);
      const data = reply.subarray(32);
      return {
        width: rect.width,
        height: rect.height,
        depth,
        bitsPerPixel: format.bitsPerPixel,
        bytesPerLine: data.length / rect.height,
        littleEndian: setup.imageByteOrder === 0,
        redMask: visual.redMask,
        greenMask: visual.greenMask,
        blueMask: visual.blueMask,
        data,
      };
    },
    async getMonitors(requestOptions) {
      const major = await queryExtension('RANDR');
      if (major === undefined) return undefined;
      randr15 ??= request(versionRequest(major, 0, 1, 5), 'RRQueryVersion').then((version) => {
        const [vMajor, vMinor] = [version.readUInt32LE(8), version.readUInt32LE(12)];
        return vMajor > 1 || (vMajor === 1 && vMinor >= 5);
      });
      if (!(await randr15)) return undefined;
      const bytes = Buffer.alloc(12);
      bytes.writeUInt8(major, 0);
      bytes.writeUInt8(42, 1); // RRGetMonitors
      bytes.writeUInt16LE(3, 2);
      bytes.writeUInt32LE(screen.root, 4);
      bytes.writeUInt8(1, 8); // active only
      const reply = await request(bytes, 'RRGetMonitors', requestOptions?.signal);
      const count = reply.readUInt32LE(12);
      const raw: { atom: number; primary: boolean; x: number; y: number; width: number; height: number }[] = [];
      let at = 32;
      for (let i = 0; i < count; i++) {
        const outputs = reply.readUInt16LE(at + 6);
        raw.push({ atom: reply.readUInt32LE(at), primary: reply.readUInt8(at + 4) === 1, x: reply.readInt16LE(at + 8), y: reply.readInt16LE(at + 10), width: reply.readUInt16LE(at + 12), height: reply.readUInt16LE(at + 14) });
        at += 24 + outputs * 4;
      }
      const monitors: X11Monitor[] = [];
      for (const monitor of raw) monitors.push({ name: await atomName(monitor.atom), primary: monitor.primary, x: monitor.x, y: monitor.y, width: monitor.width, height: monitor.height });
      return monitors;
    },
    async getCursor(requestOptions) {
      const major = await queryExtension('XFIXES');
      if (major === undefined) return undefined;
      const version = await request(versionRequest(major, 0, 4, 0), 'XFixesQueryVersion');
      if (version.readUInt32LE(8) < 1) return undefined;
      const bytes = Buffer.alloc(4);
      bytes.writeUInt8(major, 0);
      bytes.writeUInt8(4, 1); // XFixesGetCursorImage
      bytes.writeUInt16LE(1, 2);
      const reply = await request(bytes, 'XFixesGetCursorImage', requestOptions?.signal);
      const width = reply.readUInt16LE(12);
      const height = reply.readUInt16LE(14);
      const argb = new Uint32Array(width * height);
      for (let i = 0; i < argb.length; i++) argb[i] = reply.readUInt32LE(32 + i * 4);
      return { x: reply.readInt16LE(8), y: reply.readInt16LE(10), width, height, xhot: reply.readUInt16LE(16), yhot: reply.readUInt16LE(18), argb };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
