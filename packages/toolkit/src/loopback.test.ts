import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isLoopbackHost, isLoopbackHostHeader } from './loopback.js';

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001', '0::1', '::ffff:127.0.0.1', '::FFFF:127.9.9.9', '::ffff:7f00:1', '0:0:0:0:0:ffff:127.0.0.1'])(
    'accepts %s',
    (address) => expect(isLoopbackAddress(address)).toBe(true),
  );
  it.each([undefined, '', '10.0.0.1', '192.168.1.5', '::ffff:10.0.0.1', 'fe80::1', '0.0.0.0', '::', '128.0.0.1', '1127.0.0.1', '127.0.0.256', '127.0.0', '127.0.0.1.nip.io', '127.evil.com', '[::1]', 'localhost', '::1::', '1::1', '::2'])(
    'refuses %s',
    (address) => expect(isLoopbackAddress(address)).toBe(false),
  );
});

describe('isLoopbackHost', () => {
  it('accepts localhost and loopback addresses, bare or bracketed', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', 'LOCALHOST', '::1', '[::1]', '[0:0:0:0:0:0:0:1]', '[::ffff:127.0.0.1]']) expect(isLoopbackHost(host)).toBe(true);
  });
  it('refuses everything else, names that only start like loopback included', () => {
    for (const host of ['0.0.0.0', '::', '[::]', 'example.com', '192.168.0.1', '127.evil.com', 'localhost.evil.com', '127.0.0.1.nip.io', '[127.0.0.1]x', '']) expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('isLoopbackHostHeader', () => {
  it('accepts the loopback names with any port', () => {
    for (const host of ['127.0.0.1', '127.0.0.1:8765', 'localhost', 'LocalHost:1', '[::1]', '[::1]:8765']) expect(isLoopbackHostHeader(host)).toBe(true);
  });
  it('refuses everything else, and a missing Host', () => {
    for (const host of [undefined, '', 'evil.com', 'localhost.evil.com', '127.0.0.1.nip.io', '127.0.0.2', '[::2]', '::1', '127.0.0.1:abc', '127.0.0.1:']) {
      expect(isLoopbackHostHeader(host)).toBe(false);
    }
  });
});
