import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { renderAccessSchema } from '../../src/desired/index.js';
import { runInProcess } from '../helpers/in-process.js';

const TOKEN = 'CANARY-bearer-export-8e21';

let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-export-'));
  // At least 500 of each kind, and the awkward cases an import must survive: apikeys that share
  // a name, non-default values, names YAML would misread, one name no file can declare.
  emu.seed({
    sshUsers: [
      { username: 'yes', level: 'n1', password: 'CANARY-pw-export-1' },
      { username: '- not: a list', level: 'n1' },
      { username: ' padded', level: 'n1' },
    ],
    apikeys: [
      { name: 'ci', roles: [1, 2] },
      { name: 'ci', superuser: true },
      { name: 'ci' },
      { name: '123', roles: [4] },
      { name: 'null' },
    ],
    count: { sshUsers: 520, apikeys: 510 },
  });
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const amsync = (args: string[]) => runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN } });
const writes = () => emu.requests().filter((r) => r.method !== 'GET');

describe('amsync export: the import round trip', () => {
  it('writes a file that validates and plans zero changes against the same service', async () => {
    const exported = await amsync(['export', '-o', 'access.yaml', '--page-size', '100', '--write-schema']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain('Exported 522 SSH users and 515 apikeys to access.yaml (3 apikeys pinned by id; 1 left out, see the header).');
    const text = await readFile(join(dir, 'access.yaml'), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=\S+$/);
    expect(text).toContain('# - No secrets: passwords are write-only');
    expect(text).toContain('#     sshUser " padded" (id 3): its name has leading or trailing spaces');

    const validated = await amsync(['validate', '-f', 'access.yaml']);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('access.yaml: valid — 522 SSH users, 515 apikeys');

    emu.clearRequests();
    const planned = await amsync(['plan', '-f', 'access.yaml', '--detailed-exitcode', '--page-size', '100']);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.stdout).toContain('No changes. The service matches the desired state (1037 unchanged, 1 unmanaged).');
    expect(writes()).toEqual([]);

    const synced = await amsync(['sync', '-f', 'access.yaml', '--page-size', '100']);
    expect(synced.code).toBe(0);
    expect(writes()).toEqual([]);
  });

  it('pins apikeys that share a name, and writes only values that differ from the defaults', async () => {
    const run = await amsync(['export']);
    expect(run.code).toBe(0);
    const ids = emu.state().apikeys.filter((k) => k.name === 'ci').map((k) => k.id);
    expect(run.stdout).toContain(`  - name: ci\n    id: ${ids[0]}\n    roles: [ 1, 2 ]\n  - name: ci\n    id: ${ids[1]}\n    superuser: true\n  - name: ci\n    id: ${ids[2]}\n`);
    expect(run.stdout).toContain('  - name: "123"\n    roles: [ 4 ]\n');
    expect(run.stdout).toContain('  - username: "- not: a list"\n');
    expect(run.stdout).not.toMatch(/level: n1|superuser: false|roles: \[\]/);
  });

  it('is deterministic and holds no secret: no password, no bearer token, no apikey token', async () => {
    const first = await amsync(['export']);
    const second = await amsync(['export']);
    expect(first.stdout).toBe(second.stdout);
    const tokens = emu.state().apikeys.map((k) => k.token);
    for (const canary of [TOKEN, 'CANARY-pw-export-1', ...tokens]) expect(first.stdout + first.stderr).not.toContain(canary);
  });

  it('writes a $schema reference that resolves where the file is written, or none', async () => {
    await mkdir(join(dir, 'nested', 'team'), { recursive: true });
    const withSchema = await amsync(['export', '-o', 'nested/team/access.yaml', '--write-schema']);
    expect(withSchema.code, withSchema.stderr).toBe(0);
    const text = await readFile(join(dir, 'nested', 'team', 'access.yaml'), 'utf8');
    const ref = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)![1]!;
    // An editor resolves the reference from the file's own folder.
    const schema = JSON.parse(await readFile(resolve(dir, 'nested', 'team', ref), 'utf8'));
    expect(schema).toEqual(JSON.parse(renderAccessSchema()));
    expect((await amsync(['schema'])).stdout).toBe(renderAccessSchema());

    // Outside amsync's own tree, the installed schema is no path a repository can keep: no reference at all.
    const without = await amsync(['export', '-o', 'plain.yaml']);
    expect(without.code).toBe(0);
    const plain = await readFile(join(dir, 'plain.yaml'), 'utf8');
    expect(plain).not.toContain('$schema=');
    expect(plain).toContain('--write-schema');
    expect((await amsync(['export', '--write-schema'])).code).toBe(64);
  });

  it('refuses flags that mean nothing to an export (64), before any request', async () => {
    emu.clearRequests();
    const run = await amsync(['export', '-f', 'out.yaml']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('name it with -o FILE');
    for (const flags of [['--prune'], ['--json'], ['--out', 'x.yaml'], ['--max-deletes', '3']]) {
      const refused = await amsync(['export', ...flags]);
      expect(refused.code, flags.join(' ')).toBe(64);
      expect(refused.stderr).toContain('has no meaning for export');
    }
    expect(emu.requests()).toEqual([]);
  });
});
