import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, bin, spawnCollect } from '../helpers/spawn.js';
import { screen } from '../helpers/terminal-screen.js';

/**
 * `amsync sync` on a real pseudo-terminal, through util-linux `script` (on most Linux
 * machines and CI images; tmux is often missing there). test/e2e/sync-terminal.test.ts runs
 * the same flows (and the answers that cancel) in-process, so a machine without `script` still covers them.
 */
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ?? false;
if (!hasScript) console.warn('terminal-pty.test.ts skipped: util-linux `script` is not installed (the in-process terminal tests still run)');

const TOKEN = 'CANARY-bearer-pty-7d2c';
let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  if (!hasScript) return;
  assertBuilt();
  // Slow enough writes (at least 100 ms each, one at a time) that the apply lasts past the
  // second after which the progress line appears.
  emu = await startEmulator({ tokens: [TOKEN], latencyMs: 200 });
  dir = await mkdtemp(join(tmpdir(), 'amsync-pty-'));
  const users = Array.from({ length: 15 }, (_, i) => `  - username: user${String(i).padStart(2, '0')}\n    password: { env: PW }\n`).join('');
  await writeFile(join(dir, 'access.yaml'), `sshUsers:\n${users}`);
});
afterAll(async () => {
  if (!hasScript) return;
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `amsync ARGS` on a pseudo-terminal; types `answer` once the question is on the screen. */
async function onTerminal(args: string[], answer: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, bin, ...args].map((a) => `'${a}'`).join(' ');
  let answered = false;
  let shown = '';
  const run = await spawnCollect('script', ['-qfec', command, '/dev/null'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm', NO_COLOR: '1', AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-pty', AMSYNC_CONCURRENCY: '1' },
    onOutput: (output, child) => {
      shown = output;
      if (answered || !output.includes('Enter a value: ')) return;
      answered = true;
      child.stdin!.write(`${answer}\n`);
    },
  });
  return { code: run.code, output: shown };
}

describe.skipIf(!hasScript)('amsync sync on a pseudo-terminal', () => {
  it('shows the plan, asks, streams each result under a live progress line, and ends with the summary', async () => {
    const run = await onTerminal(['sync'], 'yes');
    expect(run.code, run.output).toBe(0);
    const raw = run.output;
    expect(raw).toContain('Plan: 15 to create, 0 to update, 0 to delete');
    expect(raw).toContain("Do you want to perform these actions?\r\n  amsync will perform the actions described above.\r\n  Only 'yes' will be accepted to approve.");
    // The progress line was drawn while the apply ran (it is rewritten in place, then taken away).
    expect(raw).toMatch(/Applying: \d+ of 15 done, \d+ left · [\d.]+\/s · \d+ under way/);
    const shown = screen(raw);
    const created = shown.filter((l) => l.startsWith('✓ created sshUser'));
    expect(created).toHaveLength(15);
    expect(shown.filter((l) => l.startsWith('Applying:'))).toEqual([]);
    expect(shown).toContain('Apply: 15 applied, 0 failed, 0 skipped.');
    expect(shown.indexOf('  Enter a value: yes')).toBeLessThan(shown.indexOf(created[0]!));
  });
});
