import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningTenants } from '../../src/emulator/index.js';
import { tenantsPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/**
 * Issue 31, deliverable 3: a target's `caFile` is a file the fleet needs. `validate --targets`
 * checks it (readable, PEM certificates that parse) and names the targets file's line and
 * column, the target and its key (exit 65, nothing sent); at run time, the error of a target
 * whose CA file is missing names that target's key, not the single-service setting
 * (--ca-file, AMSYNC_CA_FILE, http.caFile), and the other target still runs.
 */

const TOKEN = 'CANARY-fleet-ca-file-5c1e';

let emu: RunningTenants;
let dir: string;

tenantsPerTest(TOKEN, ['one', 'two'], 'amsync-fleet-ca-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci\n');
});

async function targets(caFile: string): Promise<void> {
  await writeFile(
    join(dir, 'targets.yaml'),
    `targets:
  - name: one
    url: ${emu.tenant('one').url}
    token: { env: FLEET_TOKEN }
  - name: two
    url: ${emu.tenant('two').url}
    token: { env: FLEET_TOKEN }
    caFile: ${caFile}
`,
  );
}

function amsync(args: string[]): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN } });
}

const requests = () => emu.tenantNames.flatMap((name) => emu.tenant(name).requests());

describe('validate --targets checks each target’s CA file', () => {
  it('a CA file that is not there: targets.yaml:line:col names the target and its key; exit 65; nothing sent', async () => {
    await targets('ca/rj-internal.pem');
    const run = await amsync(['validate', '--targets', 'targets.yaml', '-f', 'access.yaml']);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain("targets.yaml:8:13: error: the CA file ca/rj-internal.pem (caFile of target 'two') cannot be read (ENOENT) (targets[1].caFile)\n");
    expect(run.stderr.split('\n')[0]).toBe('error: targets.yaml: invalid — 1 error; nothing was sent');
    expect(requests()).toEqual([]);
  });

  it('a CA file that holds no certificate, and one that is a folder, are errors too', async () => {
    await mkdir(join(dir, 'ca'));
    await writeFile(join(dir, 'ca', 'empty.pem'), 'not a certificate\n');
    await targets('ca/empty.pem');
    const run = await amsync(['validate', '--targets', 'targets.yaml', '-f', 'access.yaml', '--json']);
    expect(run.code).toBe(65);
    const report = JSON.parse(run.stdout) as { errors: { code: string; message: string; path: string; position: unknown }[] };
    expect(report.errors).toEqual([
      {
        severity: 'error',
        code: 'target_ca_file',
        message: "the CA file ca/empty.pem (caFile of target 'two') holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        path: 'targets[1].caFile',
        position: { file: 'targets.yaml', line: 8, col: 13 },
      },
    ]);
    await targets('ca');
    const folder = await amsync(['validate', '--targets', 'targets.yaml', '-f', 'access.yaml']);
    expect(folder.code).toBe(65);
    expect(folder.stderr).toContain("error: the CA file ca (caFile of target 'two') is a directory (targets[1].caFile)");
    expect(requests()).toEqual([]);
  });
});

describe('at run time', () => {
  it("a target's missing CA file fails that target naming its key and where it is declared; the other target runs", async () => {
    await targets('ca/rj-internal.pem');
    const run = await amsync(['plan', '--targets', 'targets.yaml', '-f', 'access.yaml']);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain(`error: the CA file ${join(dir, 'ca', 'rj-internal.pem')} (caFile of target 'two', targets.yaml:5:5) cannot be read (ENOENT); nothing was sent`);
    expect(run.stdout + run.stderr).not.toContain('AMSYNC_CA_FILE');
    // Target two sent nothing; target one was listed.
    expect(emu.tenant('two').requests()).toEqual([]);
    expect(emu.tenant('one').requests().length).toBeGreaterThan(0);
    expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });
});
