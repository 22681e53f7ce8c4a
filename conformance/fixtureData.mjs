// Payloads and texts the conformance suite's server scenarios ask for, shared by the capnode fixture
// (server.mjs) and the SDK reference server (sdkServer.mjs) so both serve identical tools.

/** A 1x1 red PNG, base64. */
export const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A 10 ms, 8 kHz, 16-bit mono silent WAV, base64. */
export const WAV_SILENCE = (() => {
  const samples = 80;
  const dataBytes = samples * 2;
  const buf = Buffer.alloc(44 + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(8000, 24);
  buf.writeUInt32LE(16000, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  return buf.toString('base64');
})();

export const TEXTS = {
  simple: 'This is a simple text response for testing.',
  embedded: 'This is an embedded resource content.',
  error: 'This tool intentionally returns an error for testing',
  mixedHeading: 'Multiple content types test:',
  mixedJson: JSON.stringify({ test: 'data', value: 123 }),
  logging: ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
};

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
