import { expect, test } from 'vitest';
import { parseMcpConfig } from './config.js';
import { capText, collectSecrets, createSecretScrubber, REDACTED, redactConfig, scrubAndCap } from './redact.js';

const { config } = parseMcpConfig({
  servers: [
    { name: 'gh', command: 'x', env: { GITHUB_TOKEN: 'tok-1234567890', FLAG: '0' } },
    { name: 'web', url: 'https://x', headers: { Authorization: 'Bearer abcdefghijklmnop' } },
  ],
});

test('redactConfig keeps names and hides every env and header value', () => {
  const text = JSON.stringify(redactConfig(config));
  expect(text).toContain('GITHUB_TOKEN');
  expect(text).toContain('Authorization');
  expect(text).not.toContain('tok-1234567890');
  expect(text).not.toContain('abcdefghijklmnop');
  expect(config.servers[0]!.env.GITHUB_TOKEN).toBe('tok-1234567890');
});

test('the scrubber removes configured secrets (also URL-encoded and bare bearer tokens) and common credential shapes', () => {
  const scrub = createSecretScrubber(collectSecrets(config.servers));
  expect(scrub('failed with tok-1234567890 and abcdefghijklmnop')).toBe(`failed with ${REDACTED} and ${REDACTED}`);
  expect(scrub(`url?key=${encodeURIComponent('tok-1234567890')}`)).not.toContain('tok-1234567890');
  expect(scrub('flag is 0 of 10')).toBe('flag is 0 of 10');
  expect(scrub('Authorization: Bearer zzzzzzzzzzzzzzzz')).toBe(`Authorization: ${REDACTED}`);
  expect(scrub('api_key=sk-abcdefghijklmnopqrstuv&x=1')).toBe(`api_key=${REDACTED}&x=1`);
  expect(scrub('{"password": "hunter22"}')).toBe(`{"password": "${REDACTED}"}`);
  expect(scrub('token ghp_abcdefghijklmnopqrstuvwxyz0123')).toBe(`token ${REDACTED}`);
});

test('capText caps at 500 characters by default', () => {
  expect(capText('x'.repeat(600))).toHaveLength(500);
  expect(capText('short')).toBe('short');
});

test('scrubAndCap scrubs before it cuts: a secret straddling the cut leaves no part of itself', () => {
  const secret = 'S3cr3t-value-that-is-long-0123456789';
  const scrub = createSecretScrubber([secret]);
  expect(scrub.longestSecret).toBe(secret.length);
  for (let start = 480; start < 500; start += 1) {
    const text = `${'x'.repeat(start)}${secret}${' tail'.repeat(50)}`;
    // Cutting first would leave a prefix of the secret that no longer matches it.
    expect(scrub(text.slice(0, 500))).toContain(secret.slice(0, 500 - start));
    const out = scrubAndCap(text, scrub, 500);
    expect(out.length).toBeLessThanOrEqual(500);
    for (let length = 4; length <= secret.length; length += 1) expect(out).not.toContain(secret.slice(0, length));
  }
  // Credential shapes too (bearer tokens, api_key=…).
  const bearer = `${'y'.repeat(290)}Authorization: Bearer abcdefghijklmnopqrstuvwxyz`;
  expect(scrubAndCap(bearer, scrub, 300)).not.toMatch(/abcdefg/);
});

test('scrubAndCap scrubs only a window of a huge text, and widens it when scrubbing shrank the text', () => {
  const secret = 'k'.repeat(40);
  const scrub = createSecretScrubber([secret]);
  const huge = `${secret.repeat(2_000)}${'z'.repeat(5_000_000)}`;
  const out = scrubAndCap(huge, scrub, 300);
  expect(out.length).toBe(300);
  expect(out).not.toContain('kkkk');
  expect(out.startsWith(REDACTED)).toBe(true);
  expect(scrubAndCap('short', scrub, 300)).toBe('short');
  expect(scrubAndCap(`${'a'.repeat(10)}${secret}`, (text) => text.replaceAll(secret, REDACTED), 20)).toBe(`${'a'.repeat(10)}${REDACTED}`);
});

test('an OAuth client_secret is redacted and scrubbed like env and header values', () => {
  const { config: withSecret } = parseMcpConfig({ servers: [{ name: 'o', url: 'https://x/mcp', auth: { type: 'oauth', client_id: 'my-client', client_secret: 'cs-9876543210' } }] });
  const text = JSON.stringify(redactConfig(withSecret));
  expect(text).toContain('my-client');
  expect(text).not.toContain('cs-9876543210');
  expect(createSecretScrubber(collectSecrets(withSecret.servers))('got cs-9876543210')).toBe(`got ${REDACTED}`);
});
