import { writeFileSync } from 'node:fs';
import { isHostError } from '@capnode/host';
import { loadSettings } from '@capnode/host/settings';
import { expect } from 'vitest';

/**
 * Writes `text` to the settings file at `path` and returns the message `loadSettings` refuses it with;
 * fails the test unless it refuses, with the code `invalid_settings`.
 */
export function settingsLoadError(path: string, text: string): string {
  writeFileSync(path, text);
  try {
    loadSettings(path);
  } catch (error) {
    expect(isHostError(error) && error.code).toBe('invalid_settings');
    return (error as Error).message;
  }
  throw new Error('expected loadSettings to throw');
}
