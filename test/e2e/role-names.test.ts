import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * Roles by name (DESIGN.md §3), as a user runs amsync against the emulator: names resolved
 * through every page of GET /api/roles only when a name is used, errors with file:line:col
 * before any write, names in the plan, `export --role-names`.
 */

const TOKEN = 'role-names-token';
const roles = [
  { id: 1, name: 'viewer' },
  { id: 3, name: 'auditor' },
  ...Array.from({ length: 23 }, (_, i) => ({ id: 10 + i, name: `team-${i}` })),
  { id: 40, name: 'billing' },
];
let dir: string;
let emu: RunningEmulator;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-role-names-'));
  emu = await startEmulator({ tokens: [TOKEN], roles });
});

afterEach(() => {
  emu.setFaults({ ...defaultFaultSettings, rules: [] });
  emu.reset();
  emu.clearRequests();
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const amsync = (args: string[]) => runInProcess(args, { env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_STATE_FILE: join(dir, 'state.json') }, cwd: dir });
const roleRequests = () => emu.requests().filter((r) => r.path === '/api/roles');
const writes = () => emu.requests().filter((r) => r.method !== 'GET');

describe('roles by name', () => {
  it('are resolved through every page of GET /api/roles, shown by name in the plan, and applied as ids', async () => {
    const f = await file('named.yaml', 'apikeys:\n  - name: ci\n    roles: [auditor, 1, billing]\n');
    const run = await amsync(['sync', '-f', f, '--page-size', '10']);
    expect(run.stderr).not.toMatch(/error|warn/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('+ roles     = [1 viewer, 3 auditor, 40 billing]');
    expect(roleRequests().map((r) => r.query.size)).toEqual(['10', '10', '10']);
    expect(emu.state().apikeys[0]!.roles.map((r) => r.id)).toEqual([1, 3, 40]);
    // Compared as sets of ids: the same roles in another order and form plan nothing.
    const same = await file('same.yaml', 'apikeys:\n  - name: ci\n    roles: [billing, 3, viewer]\n');
    expect((await amsync(['plan', '-f', same, '--detailed-exitcode'])).code).toBe(0);
  });

  it('a file of ids never asks for the roles listing', async () => {
    const f = await file('ids.yaml', 'apikeys:\n  - name: ci\n    roles: [3]\n');
    expect((await amsync(['plan', '-f', f])).code).toBe(0);
    expect(roleRequests()).toEqual([]);
  });

  it('an unknown name: exit 65 at file:line:col, listing the roles there are, before any write', async () => {
    const f = await file('unknown.yaml', 'sshUsers:\n  - username: would-be-created\n    password: p\napikeys:\n  - name: ci\n    roles: [1, auditr]\n');
    const run = await amsync(['sync', '-f', f]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${f}:6:16: error: no role named 'auditr' — did you mean 'auditor'?; the service has these roles: 1 'viewer', 3 'auditor', 10 'team-0'`);
    expect(run.stderr).toContain('and 6 more');
    expect(writes()).toEqual([]);
  });

  it('a name two roles share: exit 65, write the id', async () => {
    const twins = await startEmulator({ tokens: [TOKEN], roles: [{ id: 5, name: 'ops' }, { id: 6, name: 'ops' }] });
    try {
      const f = await file('ambiguous.yaml', 'apikeys:\n  - name: ci\n    roles: [ops]\n');
      const run = await runInProcess(['sync', '-f', f], { env: { AMSYNC_URL: twins.url, AMSYNC_TOKEN: TOKEN, AMSYNC_STATE_FILE: join(dir, 'state.json') }, cwd: dir });
      expect(run.code).toBe(65);
      expect(run.stderr).toContain("3:13: error: role name 'ops' is ambiguous: roles 5 and 6 are all named so; write the id instead");
      expect(twins.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      await twins.close();
    }
  });

  it('a service without GET /api/roles (404): the error says so and suggests ids', async () => {
    emu.setFaults({ rules: [{ path: '^/api/roles$', status: 404 }] });
    const f = await file('no-listing.yaml', 'apikeys:\n  - name: ci\n    roles: [auditor]\n');
    const run = await amsync(['sync', '-f', f]);
    expect(run.code).toBe(65);
    expect(run.stderr).toMatch(/3:13: error: role 'auditor' is a name, but this service has no roles listing \(GET \/api\/roles answered 404\).*write the role's id instead/);
    expect(writes()).toEqual([]);
  });
});

describe('amsync export --role-names', () => {
  it('writes roles by name (ids where a name is not unique), and the file plans zero changes', async () => {
    emu.seed({ apikeys: [{ name: 'ci', roles: [3, 40] }, { name: 'other', roles: [1] }] });
    const out = join(dir, 'exported.yaml');
    const run = await amsync(['export', '-o', out, '--role-names']);
    expect(run.code).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text).toContain('roles: [ auditor, billing ]');
    expect(text).toContain('roles: [ viewer ]');
    expect(text).toContain('Roles are written by name');
    expect((await amsync(['plan', '-f', out, '--detailed-exitcode'])).code).toBe(0);
    const byId = await amsync(['export']);
    expect(byId.stdout).toContain('roles: [ 3, 40 ]');
  });

  it('where the service has no roles listing, it says so and writes ids', async () => {
    emu.seed({ apikeys: [{ name: 'ci', roles: [3] }] });
    emu.setFaults({ rules: [{ path: '^/api/roles$', status: 404 }] });
    const run = await amsync(['export', '--role-names']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('no roles listing');
    expect(run.stdout).toContain('roles: [ 3 ]');
  });
});
