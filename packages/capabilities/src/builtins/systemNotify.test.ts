import { describe, expect, it } from 'vitest';
import { desktopNotificationArgs, urgencyForPriority } from './systemNotify.js';

const decode = (args: readonly string[]) => Buffer.from(args.at(-1)!, 'base64').toString('utf16le');

describe('desktop notification arguments', () => {
  it('maps OpenClaw priorities to urgencies', () => {
    expect(['passive', 'active', 'timeSensitive'].map((p) => urgencyForPriority(p as never))).toEqual(['low', 'normal', 'critical']);
  });

  it('Linux: urgency, a sound-name or suppress-sound hint, then -- and the literal texts', () => {
    expect(desktopNotificationArgs('linux', { title: 't', body: '<b>x</b>', urgency: 'low', sound: 'bell' }).args).toEqual([
      '--urgency', 'low', '--app-name', 'capnode', '--hint=string:sound-name:bell', '--', 't', '&lt;b&gt;x&lt;/b&gt;',
    ]);
    expect(desktopNotificationArgs('linux', { title: 't', body: '', urgency: 'normal' }).args).toEqual(['--urgency', 'normal', '--app-name', 'capnode', '--', 't']);
  });

  it('macOS: a sound name as the first script argument, title and body last', () => {
    const { args } = desktopNotificationArgs('darwin', { title: 'T', body: 'B', urgency: 'normal', sound: 'Glass' });
    expect(args.slice(-4)).toEqual(['--', 'Glass', 'T', 'B']);
    expect(args.join(' ')).toContain('sound name (item -3 of argv)');
    expect(desktopNotificationArgs('darwin', { title: 'T', body: 'B', urgency: 'normal', sound: true }).args.slice(-3)).toEqual(['default', 'T', 'B']);
    expect(desktopNotificationArgs('darwin', { title: 'T', body: 'B', urgency: 'normal' }).args.join(' ')).not.toContain('sound name');
  });

  it('Windows: toast audio and scenario through the environment, the script unchanged', () => {
    const sound = desktopNotificationArgs('win32', { title: 'T', body: 'B', urgency: 'critical', sound: 'Reminder' });
    expect(sound.env).toMatchObject({ CAPNODE_NOTIFY_TITLE: 'T', CAPNODE_NOTIFY_BODY: 'B', CAPNODE_NOTIFY_SOUND: 'ms-winsoundevent:Notification.Reminder', CAPNODE_NOTIFY_SCENARIO: 'urgent' });
    expect(decode(sound.args)).toContain('<audio src="');
    expect(desktopNotificationArgs('win32', { title: 'T', body: 'B', urgency: 'low' }).env).toMatchObject({ CAPNODE_NOTIFY_SOUND: 'silent' });
    expect(desktopNotificationArgs('win32', { title: 'T', body: 'B', urgency: 'normal', sound: false }).env).toMatchObject({ CAPNODE_NOTIFY_SOUND: 'silent' });
    expect(desktopNotificationArgs('win32', { title: 'T', body: 'B', urgency: 'normal' }).env).not.toHaveProperty('CAPNODE_NOTIFY_SOUND');
  });
});
