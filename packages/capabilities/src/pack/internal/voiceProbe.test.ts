import { describe, expect, it } from 'vitest';
import { wavDurationMs } from './voiceProbe.js';

function wav(dataBytes: number, byteRate: number, declared = dataBytes): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(Math.min(36 + declared, 0xffffffff), 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(byteRate / 2, 24);
  header.writeUInt32LE(byteRate, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(declared, 40);
  return Buffer.concat([header, Buffer.alloc(dataBytes)]);
}

describe('voice pack helpers', () => {
  it('reads a WAV duration, also from a streamed header with no data size', () => {
    expect(wavDurationMs(wav(32_000, 32_000))).toBe(1000);
    expect(wavDurationMs(wav(16_000, 32_000, 0xffffffff))).toBe(500);
    expect(wavDurationMs(Buffer.from('not a wav file at all'))).toBeUndefined();
  });

});
