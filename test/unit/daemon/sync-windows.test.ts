import { describe, expect, it } from 'vitest';
import { compileWindows, windowState } from '../../../src/daemon/sync-windows.js';
import { durationMs, type SyncWindowSetting } from '../../../src/settings/index.js';

const at = (iso: string): number => Date.parse(iso);

// Friday 22:00 Berlin for 2 days: a weekend freeze. January is UTC+1, July UTC+2.
const weekendFreeze: SyncWindowSetting = { kind: 'deny', schedule: '0 22 * * 5', duration: '2d', timezone: 'Europe/Berlin' };
// Office hours, Monday to Friday 09:00-17:00 New York.
const officeHours: SyncWindowSetting = { kind: 'allow', schedule: '0 9 * * 1-5', duration: '8h', timezone: 'America/New_York' };

describe('windowState: whether the daemon may write at an instant', () => {
  const cases: { name: string; windows: SyncWindowSetting[]; now: string; open: boolean; reason?: RegExp }[] = [
    { name: 'no windows', windows: [], now: '2025-01-03T12:00:00Z', open: true },
    { name: 'deny: a minute before it opens (21:59 Berlin, winter)', windows: [weekendFreeze], now: '2025-01-03T20:59:00Z', open: true },
    { name: 'deny: the minute it opens', windows: [weekendFreeze], now: '2025-01-03T21:00:00Z', open: false, reason: /inside a deny window \("0 22 \* \* 5" Europe\/Berlin\) until 2025-01-05T21:00:00.000Z/ },
    { name: 'deny: Sunday afternoon, inside', windows: [weekendFreeze], now: '2025-01-05T15:00:00Z', open: false },
    { name: 'deny: the instant it ends', windows: [weekendFreeze], now: '2025-01-05T21:00:00Z', open: true },
    { name: 'deny: summer time moves it an hour in UTC (20:00Z is 22:00 Berlin)', windows: [weekendFreeze], now: '2025-07-04T20:00:30Z', open: false },
    { name: 'deny: summer, 19:59Z is 21:59 Berlin', windows: [weekendFreeze], now: '2025-07-04T19:59:00Z', open: true },
    { name: 'allow: inside office hours (10:00 New York = 15:00Z)', windows: [officeHours], now: '2025-01-06T15:00:00Z', open: true },
    { name: 'allow: before office hours', windows: [officeHours], now: '2025-01-06T13:59:00Z', open: false, reason: /^outside every allow window$/ },
    { name: 'allow: on Saturday', windows: [officeHours], now: '2025-01-04T15:00:00Z', open: false },
    { name: 'allow and deny both open: deny wins', windows: [officeHours, { kind: 'deny', schedule: '30 10 * * *', duration: '30m', timezone: 'America/New_York' }], now: '2025-01-06T15:45:00Z', open: false },
    { name: 'allow and deny: deny over, allow open', windows: [officeHours, { kind: 'deny', schedule: '30 10 * * *', duration: '30m', timezone: 'America/New_York' }], now: '2025-01-06T16:00:00Z', open: true },
    { name: 'time zone defaults to UTC', windows: [{ kind: 'deny', schedule: '0 3 * * *', duration: '90s' }], now: '2025-01-06T03:01:29Z', open: false },
    { name: '90s window over at 3:01:30', windows: [{ kind: 'deny', schedule: '0 3 * * *', duration: '90s' }], now: '2025-01-06T03:01:30Z', open: true },
    { name: 'a window that opened yesterday and lasts 1h30m is not open', windows: [{ kind: 'deny', schedule: '0 3 * * *', duration: '1h30m' }], now: '2025-01-06T05:00:00Z', open: true },
  ];
  it.each(cases)('$name', ({ windows, now, open, reason }) => {
    const state = windowState(compileWindows(windows), at(now));
    expect(state.open).toBe(open);
    if (reason) expect(state.reason).toMatch(reason);
    if (open) expect(state.reason).toBe('ok');
  });

  it('says when the deny windows open now end: the latest end', () => {
    const windows = compileWindows([weekendFreeze, { kind: 'deny', schedule: '0 23 * * 5', duration: '3d', timezone: 'Europe/Berlin' }]);
    const state = windowState(windows, at('2025-01-04T12:00:00Z'));
    expect(state.active.map((w) => new Date(w.since).toISOString())).toEqual(['2025-01-03T21:00:00.000Z', '2025-01-03T22:00:00.000Z']);
    expect(new Date(state.denyUntil!).toISOString()).toBe('2025-01-06T22:00:00.000Z');
  });
});

describe('durationMs', () => {
  it.each([
    ['2h', 7_200_000],
    ['30m', 1_800_000],
    ['90s', 90_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['0s', undefined],
    ['2', undefined],
    ['2 h', undefined],
    ['-1h', undefined],
    ['1.5h', undefined],
    ['', undefined],
  ])('%s -> %s', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });
});
