import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/io.js';
import { LiveOutput } from '../../../src/cli/live-output.js';
import { elapsed } from '../../../src/report/index.js';
import type { Change, Plan } from '../../../src/model/index.js';
import { VirtualTime } from '../../helpers/virtual-time.js';
import { CaptureStream } from '../../helpers/in-process.js';
import { lastScreenLine } from '../../helpers/terminal-screen.js';

function change(key: string, action: Change['action'], id: number | null = null): Change {
  return { kind: 'sshUser', action, key, id, fields: {} };
}

function planOf(changes: Change[]): Plan {
  return { changes, unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] };
}

function setup(tty: boolean) {
  const timers = new VirtualTime();
  const stdout = new CaptureStream(tty);
  const stderr = new CaptureStream(tty);
  const io = { stdout, stderr, stdin: process.stdin, env: {}, timers } as CliIo;
  const live = new LiveOutput(io, { streamResults: true, color: false });
  return { timers, stdout, stderr, live };
}

describe('the live output of an apply', () => {
  it('says "still creating … [10s elapsed]" every 10 s of a slow write, and stops once its result is in', async () => {
    const { timers, stdout, live } = setup(false);
    const slow = change('deploy', 'create');
    live.pause();
    live.startApply(planOf([slow, change('old', 'delete', 7)]));
    live.onWriteStart({ kind: 'sshUser', action: 'create', key: 'deploy' });
    live.onWriteStart({ kind: 'sshUser', action: 'delete', id: 7 });
    await timers.advance(9_000);
    expect(stdout.text).toBe('');
    await timers.advance(1_000);
    expect(stdout.text).toBe('still creating sshUser "deploy"… [10s elapsed]\nstill deleting sshUser "old"… [10s elapsed]\n');
    live.onResult({ kind: 'sshUser', key: 'old', action: 'delete', status: 'applied' });
    await timers.advance(10_000);
    expect(stdout.text.split('\n').slice(2)).toEqual(['', '✓ deleted sshUser "old"', 'still creating sshUser "deploy"… [20s elapsed]', '']);
    live.onResult({ kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied' });
    await timers.advance(60_000);
    expect(stdout.text.endsWith('✓ created sshUser "deploy"\n')).toBe(true);
    live.close();
    expect(timers.pendingDelays()).toEqual([]);
  });

  it('formats elapsed time as Terraform does', () => {
    expect([elapsed(10_000), elapsed(60_000), elapsed(80_000), elapsed(600_000)]).toEqual(['10s', '1m0s', '1m20s', '10m0s']);
  });

  it('shows a progress line on a terminal once a listing or an apply lasts a second: items, pages, done, left, rate', async () => {
    const { timers, stderr, live } = setup(true);
    for (let i = 0; i < 12; i += 1) live.onPage('sshUser', 100);
    live.onPage('apikey', 40);
    expect(stderr.text).toBe('');
    await timers.advance(2_000);
    expect(lastScreenLine(stderr.text)).toBe('Listing: 1,200 SSH users, 40 apikeys in 13 pages · 6.5 pages/s');

    live.pause();
    expect(lastScreenLine(stderr.text)).toBe('');
    const changes = Array.from({ length: 2_000 }, (_, i) => change(`u${i}`, 'create'));
    live.startApply(planOf(changes));
    for (let i = 0; i < 400; i += 1) {
      live.onWriteStart({ kind: 'sshUser', action: 'create', key: `u${i}` });
      live.onResult({ kind: 'sshUser', key: `u${i}`, action: 'create', status: 'applied' });
    }
    live.onWriteStart({ kind: 'sshUser', action: 'create', key: 'u400' });
    await timers.advance(4_000);
    expect(lastScreenLine(stderr.text)).toBe('Applying: 400 of 2,000 done, 1,600 left · 100/s · 1 under way');
    live.close();
    expect(lastScreenLine(stderr.text)).toBe('');
  });

  it('for a saved plan (amsync apply), the apply phase begins with the first write after the listing', async () => {
    const { timers, stderr, live } = setup(true);
    live.expect(planOf([change('deploy', 'create'), change('old', 'delete', 7)]));
    live.onPage('sshUser', 2);
    await timers.advance(1_000);
    expect(lastScreenLine(stderr.text)).toMatch(/^Listing: 2 SSH users in 1 page/);
    live.onWriteStart({ kind: 'sshUser', action: 'delete', id: 7 });
    await timers.advance(2_000);
    expect(lastScreenLine(stderr.text)).toBe('Applying: 0 of 2 done, 2 left · 0.0/s · 1 under way');
    live.close();
  });

  it('writes logs and results above the progress line, which comes back after them', async () => {
    const { timers, stderr, stdout, live } = setup(true);
    live.onPage('sshUser', 100);
    await timers.advance(1_000);
    live.logStream.write('{"level":30,"msg":"retrying"}\n');
    expect(stderr.text).toContain('{"level":30,"msg":"retrying"}\n');
    expect(lastScreenLine(stderr.text)).toMatch(/^Listing: 100 SSH users in 1 page/);
    live.print('line on stdout\n');
    expect(stdout.text).toBe('line on stdout\n');
    live.close();
  });

  it('writes no escape code and no progress line when stderr is not a terminal', async () => {
    const { timers, stderr, live } = setup(false);
    live.onPage('sshUser', 100);
    await timers.advance(5_000);
    live.logStream.write('log line\n');
    live.close();
    expect(stderr.text).toBe('log line\n');
  });
});

describe('the live output after an interrupt', () => {
  it('prints each result that was sent as it comes, and one line for all the changes not started, at the end', () => {
    const { stdout, live } = setup(true);
    live.pause();
    live.startApply(planOf([change('a', 'create'), change('b', 'create'), change('c', 'create'), change('d', 'create')]));
    live.onResult({ kind: 'sshUser', key: 'a', action: 'create', status: 'applied' });
    for (const key of ['b', 'c', 'd']) live.onResult({ kind: 'sshUser', key, action: 'create', status: 'skipped', error: 'not started: interrupted (SIGINT)', notStarted: true });
    live.onResult({ kind: 'sshUser', key: 'e', action: 'create', status: 'failed', error: 'POST /api/sshusers: 503 service unavailable; not retried: interrupted (SIGINT)' });
    live.close();
    expect(stdout.text.split('\n')).toEqual([
      '',
      '✓ created sshUser "a"',
      '✗ failed to create sshUser "e": POST /api/sshusers: 503 service unavailable; not retried: interrupted (SIGINT)',
      '· 3 changes not started: interrupted (SIGINT)',
      '',
    ]);
  });
});
