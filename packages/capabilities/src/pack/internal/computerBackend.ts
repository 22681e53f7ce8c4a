import { CapabilityError } from '../../errors.js';
import { createHelperInputBackend } from './computerOther.js';
import type { InputBackend } from './computerSteps.js';
import { createX11InputBackend } from './computerX11.js';

/**
 * The input backend of a platform, loaded only when `computer.act` runs (dynamic import): XTEST on
 * X11, a helper process on macOS and Windows.
 */
export function inputBackendFor(platform: NodeJS.Platform, display: string | undefined): InputBackend {
  if (platform === 'darwin' || platform === 'win32') return createHelperInputBackend(platform);
  if (!display) throw new CapabilityError('unavailable', 'unavailable here: no X11 display (set DISPLAY; Wayland-only sessions need XWayland).');
  return createX11InputBackend(display);
}
