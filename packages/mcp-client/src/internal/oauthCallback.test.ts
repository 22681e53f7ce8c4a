import { expect, test } from 'vitest';
import { startOAuthCallbackListener } from './oauthCallback.js';

test('accepts only GET /callback with the issued state; a wrong state is refused and the wait goes on', async () => {
  const listener = await startOAuthCallbackListener();
  try {
    expect(listener.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const waiting = listener.waitFor('good-state', { timeoutMs: 5_000 });
    expect((await fetch(`${listener.redirectUrl}?code=x&state=bad-state`)).status).toBe(400);
    expect((await fetch(new URL('/other?code=x&state=good-state', listener.redirectUrl))).status).toBe(404);
    expect((await fetch(`${listener.redirectUrl}?code=x&state=good-state`, { method: 'POST' })).status).toBe(404);
    const ok = await fetch(`${listener.redirectUrl}?code=the-code&state=good-state&iss=${encodeURIComponent('https://as.example')}`);
    expect(ok.status).toBe(200);
    expect(await waiting).toEqual({ code: 'the-code', iss: 'https://as.example' });
    // Single use: a replay of the same redirect is refused.
    expect((await fetch(`${listener.redirectUrl}?code=the-code&state=good-state`)).status).toBe(400);
  } finally {
    await listener.close();
  }
});

test('an error answer rejects with its code only; text from the redirect is never repeated', async () => {
  const listener = await startOAuthCallbackListener();
  try {
    const waiting = listener.waitFor('s', { timeoutMs: 5_000 });
    waiting.catch(() => {});
    await fetch(`${listener.redirectUrl}?error=access_denied&error_description=${encodeURIComponent('<script>evil</script>')}&state=s`);
    await expect(waiting).rejects.toMatchObject({ code: 'auth_failed', message: 'the authorization server did not grant access (access_denied)' });
    const second = listener.waitFor('t', { timeoutMs: 5_000 });
    second.catch(() => {});
    await fetch(`${listener.redirectUrl}?error=${encodeURIComponent('Injected text\n')}&state=t`);
    await expect(second).rejects.toMatchObject({ message: 'the authorization server did not grant access (no code)' });
  } finally {
    await listener.close();
  }
});

test('the wait ends at its timeout and on abort; close releases the port', async () => {
  const listener = await startOAuthCallbackListener();
  await expect(listener.waitFor('s', { timeoutMs: 50 })).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/no authorization response within/) });
  const controller = new AbortController();
  const aborted = listener.waitFor('s', { timeoutMs: 5_000, signal: controller.signal });
  controller.abort();
  await expect(aborted).rejects.toMatchObject({ code: 'auth_failed', message: 'the authorization was cancelled' });
  await listener.close();
  await expect(fetch(listener.redirectUrl)).rejects.toThrow();
});

test('a fixed port that is taken is a clear auth_failed error', async () => {
  const first = await startOAuthCallbackListener();
  const port = Number(new URL(first.redirectUrl).port);
  try {
    await expect(startOAuthCallbackListener(port)).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(new RegExp(`127\\.0\\.0\\.1:${port}: EADDRINUSE`)) });
  } finally {
    await first.close();
  }
});
