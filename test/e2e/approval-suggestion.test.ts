import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/**
 * Issue 27 finding 6: after one of two gated changes was approved (typed at the terminal, or
 * given with --approve), amsync suggested `--approve <set hash> (all of them)`; the approved
 * change was then applied, so on the next run the set is another and that hash matched no
 * change. Each suggestion is checked by doing what it says: running again with exactly the
 * flags it prints, against the emulator, and seeing the remaining change reach the service.
 */

const TOKEN = 'CANARY-bearer-approval-hint-5e0c';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-approval-hint-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(
    join(dir, 'access.yaml'),
    'policy:\n  superuser: approve\napikeys:\n  - name: root-a\n    superuser: true\n  - name: root-b\n    superuser: true\n',
  );
});

function amsync(args: readonly string[], options: { stdin?: string; tty?: boolean } = {}): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'warn' }, ...options });
}

const superusers = () => emu.state().apikeys.filter((k) => k.superuser).map((k) => k.name).sort();

/** Each gated change's hash, by key name, as the plan lists them (`  HASH  create apikey "NAME" (superuser)`). */
function gateHashes(planText: string): Map<string, string> {
  return new Map([...planText.matchAll(/^ {2}([0-9a-f]{16}) {2}create apikey "([^"]+)"/gm)].map((m) => [m[2]!, m[1]!]));
}

/** The flags a suggestion says to run again with: every `--approve HASH` in `text`. */
function suggestedFlags(text: string): string[] {
  return [...text.matchAll(/--approve ([0-9a-f]{16})/g)].flatMap((m) => ['--approve', m[1]!]);
}

/** Runs again with the suggestion's flags; the remaining gated change must reach the service. */
async function followSuggestion(suggestion: string): Promise<void> {
  const flags = suggestedFlags(suggestion);
  expect(flags.length, suggestion).toBeGreaterThan(0);
  emu.clearRequests();
  const again = await amsync(['sync', ...flags]);
  expect(again.stderr).not.toContain('matches no change');
  expect(again.code, again.stderr).toBe(0);
  expect(superusers()).toEqual(['root-a', 'root-b']);
  // The service received exactly the one write left: the create of root-b.
  expect(emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.item?.name}`)).toEqual(['POST root-b']);
}

describe('the --approve suggestion after one of two gated changes was approved', () => {
  it('at a terminal (one hash typed): the exit-3 message names a hash that applies the other on the next run', async () => {
    const hashes = gateHashes((await amsync(['plan'])).stdout);
    expect([...hashes.keys()].sort()).toEqual(['root-a', 'root-b']);
    const first = await amsync(['sync'], { tty: true, stdin: `${hashes.get('root-a')}\n` });
    expect(first.code, first.stderr).toBe(3);
    expect(superusers()).toEqual(['root-a']);
    const message = /^error: .*$/m.exec(first.stderr)![0];
    expect(message).toContain('1 change not written');
    expect(message).not.toContain(hashes.get('root-a'));
    await followSuggestion(message.slice(message.indexOf('run again with')));
  });

  it('without a terminal (--approve of one): the report and the error each suggest what applies the other', async () => {
    const hashes = gateHashes((await amsync(['plan'])).stdout);
    const first = await amsync(['sync', '--approve', hashes.get('root-a')!]);
    expect(first.code, first.stderr).toBe(3);
    expect(superusers()).toEqual(['root-a']);
    const reportLine = /^ {2}To approve: .*$/m.exec(first.stdout)![0];
    const message = /^error: .*$/m.exec(first.stderr)![0];
    for (const suggestion of [reportLine, message.slice(message.indexOf('run again with'))]) expect(suggestion).not.toContain(hashes.get('root-a'));
    await followSuggestion(reportLine);
  });

  it('with nothing approved, the set hash is still what is suggested, and it applies both', async () => {
    const first = await amsync(['sync']);
    expect(first.code).toBe(3);
    const message = /^error: .*$/m.exec(first.stderr)![0];
    const flags = suggestedFlags(message.slice(message.indexOf('run again with')));
    expect(flags).toHaveLength(2);
    emu.clearRequests();
    const again = await amsync(['sync', ...flags]);
    expect(again.code, again.stderr).toBe(0);
    expect(superusers()).toEqual(['root-a', 'root-b']);
  });
});
