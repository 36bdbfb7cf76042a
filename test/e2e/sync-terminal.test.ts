import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';

/** `amsync sync` at a terminal (stdin and stdout a TTY), in-process; test/e2e/terminal-pty.test.ts does it through a real pseudo-terminal. */

const TOKEN = 'CANARY-bearer-tty-2b8d';
const PASSWORD = 'CANARY-password-tty-61fe';
const QUESTION = "Do you want to perform these actions?\n  amsync will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ";

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-tty-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n  - username: old\n    ensure: absent\n');
});

const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const sync = (args: string[], stdin?: string) =>
  runInProcess(['sync', ...args], { cwd: dir, tty: true, stdin, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD } });

describe('amsync sync at a terminal', () => {
  it('shows the plan, asks, and applies after "yes", each result as it happens, then the summary', async () => {
    const run = await sync([], 'yes\n');
    expect(run.code, run.stderr).toBe(0);
    const out = run.stdout;
    const plan = out.indexOf('amsync will perform the following actions:');
    const question = out.indexOf(QUESTION);
    const created = out.indexOf('✓ created sshUser "deploy"');
    const summary = out.indexOf('Apply: 2 applied, 0 failed, 0 skipped.');
    expect([plan, question, created, summary].every((i) => i >= 0)).toBe(true);
    expect(plan < question && question < created && created < summary).toBe(true);
    expect(out).toContain('Plan: 1 to create, 0 to update, 1 to delete');
    expect(out).toContain('✓ deleted sshUser "old"');
    expect(writes().map((r) => r.method).sort()).toEqual(['DELETE', 'POST']);
  });

  it('anything but "yes" cancels, as in Terraform: "Apply cancelled.", exit 1, nothing written', async () => {
    for (const answer of ['no\n', 'y\n', 'YES\n', '\n', undefined]) {
      emu.clearRequests();
      const run = await sync([], answer);
      expect(run.code, String(answer)).toBe(1);
      expect(run.stdout).toContain(QUESTION);
      expect(run.stdout.endsWith('Apply cancelled.\n')).toBe(true);
      expect(run.stdout).not.toContain('✓');
      expect(writes()).toEqual([]);
    }
  });

  it('--auto-approve does not ask', async () => {
    const run = await sync(['--auto-approve']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('Do you want to perform these actions?');
    expect(run.stdout).toContain('✓ created sshUser "deploy"');
  });

  it('asks nothing when there is nothing to do', async () => {
    expect((await sync(['--auto-approve'])).code).toBe(0);
    const again = await sync([]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^No changes\./m);
    expect(again.stdout).not.toContain('Do you want');
  });

  it('--json or Markdown at a terminal needs --auto-approve (64, nothing sent): one document cannot hold a question', async () => {
    for (const format of [['--json'], ['--format', 'markdown']]) {
      const run = await sync(format, 'yes\n');
      expect(run.code).toBe(64);
      expect(run.stderr).toContain('--auto-approve');
    }
    expect(emu.requests()).toEqual([]);
    const approved = await sync(['--json', '--auto-approve']);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ dryRun: false, summary: { create: 1, delete: 1 } });
  });

  it('without a terminal, applies without asking, and prints exactly what it always printed', async () => {
    const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD };
    const planned = await runInProcess(['plan'], { cwd: dir, env });
    const run = await runInProcess(['sync'], { cwd: dir, env, stdin: 'no\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('Do you want');
    // The plan, then the results, then the summary: the plan is the dry-run's, word for word.
    expect(run.stdout.startsWith(planned.stdout)).toBe(true);
    expect(run.stdout.slice(planned.stdout.length).split('\n').sort()).toEqual(['', '', '', 'Apply: 2 applied, 0 failed, 0 skipped.', '✓ created sshUser "deploy"', '✓ deleted sshUser "old"'].sort());
  });

  describe('a quiet terminal: nothing is logged after the summary unless a level is asked for', () => {
    // A pretty log line at a terminal: `[14:55:27.403] INFO: sync complete`, then its fields.
    const logLines = (stderr: string) => stderr.split('\n').filter((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+:/.test(l));

    it('at a terminal: the summary is the last thing printed; no log line on stderr', async () => {
      const run = await sync(['--auto-approve']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.endsWith('Apply: 2 applied, 0 failed, 0 skipped.\n')).toBe(true);
      expect(logLines(run.stderr)).toEqual([]);
      expect(run.stderr).not.toContain('sync complete');
    });

    it('--log-level info (or AMSYNC_LOG_LEVEL, or logLevel in the settings file) asks for the info lines: they are back', async () => {
      const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD };
      await writeFile(join(dir, 'settings.yaml'), 'logLevel: info\n');
      const asked = [
        { args: ['--log-level', 'info'], env },
        { args: [], env: { ...env, AMSYNC_LOG_LEVEL: 'info' } },
        { args: ['--settings', 'settings.yaml'], env },
      ];
      for (const { args, env: given } of asked) {
        emu.reset();
        emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
        const run = await runInProcess(['sync', '--auto-approve', ...args], { cwd: dir, tty: true, env: given });
        expect(run.code, run.stderr).toBe(0);
        expect(logLines(run.stderr), args.join(' ')).toEqual([expect.stringMatching(/ INFO: sync complete$/)]);
      }
    });

    it('not at a terminal (CI, a pipe): the JSON log lines at info, as documented', async () => {
      const run = await runInProcess(['sync'], { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD } });
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; level: number });
      expect(lines.map((l) => l.msg)).toContain('sync complete');
    });
  });
});
