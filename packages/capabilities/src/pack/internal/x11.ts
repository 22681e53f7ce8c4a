import { readFile } from 'node:fs/promises';
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { CapabilityError } from '../../errors.js';
import { openX11Wire, type X11Wire } from './x11Wire.js';

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
  /** The range of keycodes the server uses (8..255 at most). */
  readonly minKeycode: number;
  readonly maxKeycode: number;
}

/** Parses the additional data of a successful setup reply (the bytes after its 8-byte header). */
export function parseSetup(data: Buffer): X11Setup {
  const vendorLength = data.readUInt16LE(16);
  const screenCount = data.readUInt8(20);
  const formatCount = data.readUInt8(21);
  const imageByteOrder = data.readUInt8(22);
  const minKeycode = data.readUInt8(26);
  const maxKeycode = data.readUInt8(27);
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
  return { vendor, imageByteOrder, formats, screens, minKeycode, maxKeycode };
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
  /** A buffer the reply is written into when it fits; the answer then aliases it. */
  readonly into?: Buffer | undefined;
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
  /** The major opcode of an extension (QueryExtension, cached), `undefined` when the server lacks it. */
  extension(name: string): Promise<number | undefined>;
  /** Sends any request that has a reply (input injection and keyboard mapping build their own). */
  request(bytes: Buffer, what: string, options?: X11RequestOptions): Promise<Buffer>;
  /** Sends a request without a reply; follow it with {@link X11Client.sync} to learn it was handled. */
  send(bytes: Buffer): void;
  /** A round trip (GetInputFocus): resolves once the server has handled every earlier request. */
  sync(options?: X11RequestOptions): Promise<void>;
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

async function readCookie(address: X11Address, file: string | undefined): Promise<XauthEntry | undefined> {
  let content: Buffer;
  try {
    content = await readFile(file ?? join(homedir(), '.Xauthority'));
  } catch {
    return undefined;
  }
  return pickXauthEntry(parseXauthority(content), address);
}

/** The connection setup request: little-endian, protocol 11.0, with the cookie when there is one. */
export function setupRequest(cookie: XauthEntry | undefined): Buffer {
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

/** GetImage (opcode 73), ZPixmap, all planes, of a rectangle of `drawable`. */
export function getImageRequest(drawable: number, rect: { x: number; y: number; width: number; height: number }): Buffer {
  const bytes = Buffer.alloc(20);
  bytes.writeUInt8(73, 0);
  bytes.writeUInt8(2, 1); // ZPixmap
  bytes.writeUInt16LE(5, 2);
  bytes.writeUInt32LE(drawable, 4);
  bytes.writeInt16LE(rect.x, 8);
  bytes.writeInt16LE(rect.y, 10);
  bytes.writeUInt16LE(rect.width, 12);
  bytes.writeUInt16LE(rect.height, 14);
  bytes.writeUInt32LE(0xffffffff, 16);
  return bytes;
}

/** Decodes a GetImage reply with the visual and pixmap format it names. */
export function imageFromReply(reply: Buffer, rect: { width: number; height: number }, setup: X11Setup, screen: X11Screen): X11Image {
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
}

/** QueryExtension (opcode 98). */
export function queryExtensionRequest(name: string): Buffer {
  const nameBytes = Buffer.from(name, 'latin1');
  const bytes = Buffer.alloc(8 + pad4(nameBytes.length));
  bytes.writeUInt8(98, 0);
  bytes.writeUInt16LE(bytes.length / 4, 2);
  bytes.writeUInt16LE(nameBytes.length, 4);
  nameBytes.copy(bytes, 8);
  return bytes;
}

/** An extension's QueryVersion (minor opcode 0) asking for `wantMajor.wantMinor`. */
export function versionRequest(major: number, wantMajor: number, wantMinor: number): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt8(major, 0);
  bytes.writeUInt8(0, 1);
  bytes.writeUInt16LE(3, 2);
  bytes.writeUInt32LE(wantMajor, 4);
  bytes.writeUInt32LE(wantMinor, 8);
  return bytes;
}

/** GetInputFocus (opcode 43): the cheapest request with a reply, used as a sync point. */
export function getInputFocusRequest(): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt8(43, 0);
  bytes.writeUInt16LE(1, 2);
  return bytes;
}

/** GetAtomName (opcode 17). */
export function atomNameRequest(atom: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeUInt8(17, 0);
  bytes.writeUInt16LE(2, 2);
  bytes.writeUInt32LE(atom, 4);
  return bytes;
}

/** RRGetMonitors (RandR 1.5, minor 42) of `root`, active monitors only. */
export function getMonitorsRequest(major: number, root: number): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt8(major, 0);
  bytes.writeUInt8(42, 1);
  bytes.writeUInt16LE(3, 2);
  bytes.writeUInt32LE(root, 4);
  bytes.writeUInt8(1, 8);
  return bytes;
}

/** The monitors of an RRGetMonitors reply, names still as atoms. */
export function monitorsFromReply(reply: Buffer): (Omit<X11Monitor, 'name'> & { atom: number })[] {
  const count = reply.readUInt32LE(12);
  const monitors: (Omit<X11Monitor, 'name'> & { atom: number })[] = [];
  let at = 32;
  for (let i = 0; i < count && at + 24 <= reply.length; i++) {
    const outputs = reply.readUInt16LE(at + 6);
    monitors.push({ atom: reply.readUInt32LE(at), primary: reply.readUInt8(at + 4) === 1, x: reply.readInt16LE(at + 8), y: reply.readInt16LE(at + 10), width: reply.readUInt16LE(at + 12), height: reply.readUInt16LE(at + 14) });
    at += 24 + outputs * 4;
  }
  return monitors;
}

/** XFixesGetCursorImage (minor 4). */
export function cursorImageRequest(major: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt8(major, 0);
  bytes.writeUInt8(4, 1);
  bytes.writeUInt16LE(1, 2);
  return bytes;
}

export function cursorFromReply(reply: Buffer): X11Cursor {
  const width = reply.readUInt16LE(12);
  const height = reply.readUInt16LE(14);
  const argb = new Uint32Array(width * height);
  for (let i = 0; i < argb.length; i++) argb[i] = reply.readUInt32LE(32 + i * 4);
  return { x: reply.readInt16LE(8), y: reply.readInt16LE(10), width, height, xhot: reply.readUInt16LE(16), yhot: reply.readUInt16LE(18), argb };
}

/** Checks a setup reply and reads the screen `$DISPLAY` names. */
function acceptSetup(reply: Buffer, address: X11Address, display: string): { setup: X11Setup; screen: X11Screen } {
  const status = reply.readUInt8(0);
  if (status !== 1) {
    const reason = reply.toString('latin1', 8, 8 + reply.readUInt8(1)).trim() || (status === 2 ? 'authentication required' : 'refused');
    throw new CapabilityError('unavailable', `unavailable here: the X display ${display} refused the connection (${reason}); set XAUTHORITY to the display's cookie file.`);
  }
  const setup = parseSetup(reply.subarray(8));
  const screen = setup.screens[address.screen] ?? setup.screens[0];
  if (!screen) throw new CapabilityError('unavailable', `unavailable here: the X display ${display} has no screen.`);
  return { setup, screen };
}

/** The client API over a set-up connection; extension opcodes, the RandR version and atom names are cached. */
function createClient(wire: X11Wire, setup: X11Setup, screen: X11Screen): X11Client {
  const extensions = new Map<string, Promise<number | undefined>>();
  const extension = (name: string): Promise<number | undefined> => {
    let known = extensions.get(name);
    if (!known) {
      known = wire.request(queryExtensionRequest(name), `QueryExtension ${name}`).then((reply) => (reply.readUInt8(8) === 1 ? reply.readUInt8(9) : undefined));
      extensions.set(name, known);
    }
    return known;
  };
  const atomNames = new Map<number, string>();
  const atomName = async (atom: number): Promise<string> => {
    if (atom === 0) return '';
    const known = atomNames.get(atom);
    if (known !== undefined) return known;
    const reply = await wire.request(atomNameRequest(atom), 'GetAtomName');
    const name = reply.toString('latin1', 32, 32 + reply.readUInt16LE(8));
    atomNames.set(atom, name); // Atoms never change meaning while the server runs.
    return name;
  };
  let randr15: Promise<boolean> | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await wire.end();
  };
  return {
    setup,
    screen,
    get closed() {
      return closed || wire.broken;
    },
    unref: () => wire.unref(),
    extension,
    request: (bytes, what, options) => wire.request(bytes, what, options?.signal),
    send: (bytes) => wire.send(bytes),
    async sync(options) {
      await wire.request(getInputFocusRequest(), 'GetInputFocus', options?.signal);
    },
    async getImage(rect, options) {
      return imageFromReply(await wire.request(getImageRequest(screen.root, rect), 'GetImage', options?.signal, options?.into), rect, setup, screen);
    },
    async getMonitors(options) {
      const major = await extension('RANDR');
      if (major === undefined) return undefined;
      randr15 ??= wire.request(versionRequest(major, 1, 5), 'RRQueryVersion').then((version) => {
        const [vMajor, vMinor] = [version.readUInt32LE(8), version.readUInt32LE(12)];
        return vMajor > 1 || (vMajor === 1 && vMinor >= 5);
      });
      if (!(await randr15)) return undefined;
      const raw = monitorsFromReply(await wire.request(getMonitorsRequest(major, screen.root), 'RRGetMonitors', options?.signal));
      const monitors: X11Monitor[] = [];
      for (const { atom, ...monitor } of raw) monitors.push({ name: await atomName(atom), ...monitor });
      return monitors;
    },
    async getCursor(options) {
      const major = await extension('XFIXES');
      if (major === undefined) return undefined;
      const version = await wire.request(versionRequest(major, 4, 0), 'XFixesQueryVersion');
      if (version.readUInt32LE(8) < 1) return undefined;
      return cursorFromReply(await wire.request(cursorImageRequest(major), 'XFixesGetCursorImage', options?.signal));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Connects to the X server of `display` over its socket (with the Xauthority cookie when there is
 * one) and completes the setup handshake. Replies are matched to requests by sequence number, so
 * requests may overlap.
 *
 * @throws CapabilityError `unavailable` when the display cannot be reached or refuses the connection.
 */
export async function connectX11(options: ConnectX11Options): Promise<X11Client> {
  const address = parseDisplay(options.display);
  if (!address) throw new CapabilityError('unavailable', `unavailable here: DISPLAY "${options.display}" is not an X11 display name.`);
  const cookie = await readCookie(address, options.xauthority ?? process.env.XAUTHORITY);
  const wire = openX11Wire(address.kind === 'unix' ? { path: address.path } : { port: address.port, host: address.host }, options.display, options.timeoutMs ?? 10_000);
  try {
    const { setup, screen } = acceptSetup(await wire.setup(setupRequest(cookie), options.signal), address, options.display);
    return createClient(wire, setup, screen);
  } catch (error) {
    wire.destroy();
    throw error;
  }
}
