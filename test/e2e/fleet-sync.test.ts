import { closedPort as closedPortOf } from '../helpers/ports.js';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { forms } from '../helpers/encodings.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/**
 * DESIGN.md §9: one desired file kept on many services. Each target runs with its own client,
 * state file, token folder and writer lock; one target's failure (unreachable, a guard's
 * refusal) never stops or changes another's run. In-process CLI against one emulator serving
 * tenants on 127.0.0.1, and a closed port for the unreachable target.
 */

// Canaries: a quote, a backslash and (in the password) non-ASCII. The token is a bearer token,
// so it is printable ASCII; the emulator accepts it.
const TOKEN = 'CANARY-fleet"tok\\en-7f3a';
const GUARDED_TOKEN = 'CANARY-guarded"file\\token-19c0';
const PASSWORD = 'CANARY-pä"ss\\wörd-€-42';
const canaryForms = forms([TOKEN, GUARDED_TOKEN, PASSWORD]);

const accessFile = `
sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
apikeys:
  - name: ci
    roles: [1]
prune:
  sshUsers: true
`;

let emu: RunningTenants;
let closedPort: number;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN, GUARDED_TOKEN], tenants: ['good', 'guarded', 'spare'] });
  closedPort = await closedPortOf();
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  resetTenants(emu, { tokens: [TOKEN, GUARDED_TOKEN], readOnlyTokens: [] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-fleet-'));
  await mkdir(join(dir, 'creds'));
  await writeFile(join(dir, 'creds', 'guarded'), `${GUARDED_TOKEN}\n`);
  await writeFile(join(dir, 'access.yaml'), accessFile);
  await writeFile(join(dir, 'targets.yaml'), targetsFile());
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function targetsFile(extra = ''): string {
  return `# yaml-language-server: $schema=../config/targets.schema.json
targets:
  - name: good
    url: ${emu.tenant('good').url}
    token: { env: FLEET_TOKEN }
    labels: { site: sp, env: prod }
  - name: down
    url: http://127.0.0.1:${closedPort}
    token: { env: FLEET_TOKEN }
    labels: { site: rj, env: prod }
  - name: guarded
    url: ${emu.tenant('guarded').url}
    token: { file: creds/guarded }
    labels: { site: sp, env: dev }
${extra}`;
}

function amsync(args: string[], env: Record<string, string> = {}): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, ...env } });
}

const writesTo = (name: string) => emu.tenant(name).requests().filter((r) => r.method !== 'GET');
const usernames = (name: string) => emu.tenant(name).state().sshUsers.map((u) => u.username).sort();

function expectNoCanary(...texts: string[]): void {
  for (const text of texts) for (const form of canaryForms) expect(text).not.toContain(form);
}

describe('amsync sync --targets: one target failing or refused never stops or changes another', () => {
  it('applies the good target fully, writes nothing to the refused one, reports the unreachable one, exits 1', async () => {
    emu.tenant('good').seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
    // Three users to prune on `guarded`, over --max-deletes 2: its guard refuses the plan.
    emu.tenant('guarded').seed({ sshUsers: ['a', 'b', 'c'].map((username) => ({ username, level: 'n1', password: 'x' })) });
    emu.tenant('good').clearRequests();
    emu.tenant('guarded').clearRequests();

    const run = await amsync(['sync', '--targets', 'targets.yaml', '--max-deletes', '2', '--state-file', 'state/state.json', '--tokens-dir', 'tokens']);

    expect(run.code).toBe(1);
    // One section per target, in the file's order, then the fleet's summary line.
    const headers = [...run.stdout.matchAll(/^== target (\S+) \((\S+)\) ==$/gm)].map((m) => [m[1], m[2]]);
    expect(headers).toEqual([
      ['good', emu.tenant('good').url],
      ['down', `http://127.0.0.1:${closedPort}`],
      ['guarded', emu.tenant('guarded').url],
    ]);
    expect(run.stdout).toMatch(/\nFleet: 3 targets — 1 with changes, 1 failed, 1 refused\n$/);
    expect(run.stdout).toMatch(/== target down [^\n]*\nerror: nothing listens at http:\/\/127\.0\.0\.1:\d+/);
    expect(run.stdout).toMatch(/== target guarded [\s\S]*refused: refusing to delete 3 items: the deletion budget is 2/);
    expect(run.stderr).toContain('error: of 3 targets, 1 failed (down), 1 refused (guarded)');

    // The good one: applied fully (create, create, delete), its token file in its own folder.
    expect(usernames('good')).toEqual(['deploy']);
    expect(emu.tenant('good').state().apikeys.map((k) => k.name)).toEqual(['ci']);
    expect(writesTo('good').map((r) => `${r.method} ${r.path}`).sort()).toEqual(['DELETE /api/sshusers/1', 'POST /api/3rdparty/apikeys', 'POST /api/sshusers']);
    expect(existsSync(join(dir, 'tokens', 'good', 'ci'))).toBe(true);
    // The refused one: listed, never written to.
    expect(emu.tenant('guarded').requests().length).toBeGreaterThan(0);
    expect(writesTo('guarded')).toEqual([]);
    expect(usernames('guarded')).toEqual(['a', 'b', 'c']);
    expect(existsSync(join(dir, 'tokens', 'guarded'))).toBe(false);
    // A tenant no target names got nothing at all.
    expect(emu.tenant('spare').requests()).toEqual([]);
    // One state file per target, beside the configured one; only the one that wrote has fingerprints.
    expect((await readdir(join(dir, 'state'))).filter((f) => f.endsWith('.json')).sort()).toEqual(['state.good.json']);
    expectNoCanary(run.stdout, run.stderr, await readFile(join(dir, 'state', 'state.good.json'), 'utf8'));
  });

  it('the next sync of the good target makes zero writes', async () => {
    const args = ['sync', '--targets', 'targets.yaml', '--target', 'good', '--state-file', 'state/state.json'];
    expect((await amsync(args)).code).toBe(0);
    emu.tenant('good').clearRequests();
    const again = await amsync([...args, '--detailed-exitcode']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Fleet: 1 target — 1 unchanged');
    expect(writesTo('good')).toEqual([]);
  });
});

describe('exit codes of a fleet: 1 if any failed, else 3 if any refused, else 2 for changes with --detailed-exitcode', () => {
  it('changes only: 2 with --detailed-exitcode, 0 without', async () => {
    const plan = ['plan', '--targets', 'targets.yaml', '--selector', 'site=sp'];
    expect((await amsync([...plan, '--detailed-exitcode'])).code).toBe(2);
    expect((await amsync(plan)).code).toBe(0);
  });

  it('a refusal beside changes: 3', async () => {
    emu.tenant('guarded').seed({ sshUsers: ['a', 'b'].map((username) => ({ username, level: 'n1', password: 'x' })) });
    const run = await amsync(['plan', '--targets', 'targets.yaml', '--selector', 'site=sp', '--max-deletes', '1', '--detailed-exitcode']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('Fleet: 2 targets — 1 with changes, 1 refused');
  });

  it('a failure beside a refusal: 1', async () => {
    emu.tenant('guarded').seed({ sshUsers: ['a', 'b'].map((username) => ({ username, level: 'n1', password: 'x' })) });
    expect((await amsync(['plan', '--targets', 'targets.yaml', '--max-deletes', '1', '--detailed-exitcode'])).code).toBe(1);
  });

  it('a 401 on one target fails that target only', async () => {
    emu.tenant('guarded').setTokens({ tokens: [TOKEN], readOnlyTokens: [], expiredTokens: [] });
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--selector', 'site=sp', '--json']);
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout);
    expect(doc.summary).toEqual({ targets: 2, changed: 1, failed: 1, refused: 0, skipped: 0, unchanged: 0 });
    expect(doc.targets.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
      ['good', 'changed'],
      ['guarded', 'failed'],
    ]);
    expect(usernames('good')).toEqual(['deploy']);
    expectNoCanary(run.stdout, run.stderr);
  });
});

describe('--json and --format markdown of a fleet', () => {
  it('prints {formatVersion, fleet, summary, targets: [{name, url, status, summary, changes, results, error}]}', async () => {
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--json', '--state-file', 'state/state.json']);
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ formatVersion: 1, fleet: true, dryRun: false, summary: { targets: 3, changed: 2, failed: 1, refused: 0, unchanged: 0 } });
    const [good, down] = doc.targets;
    expect(good).toMatchObject({ name: 'good', url: emu.tenant('good').url, status: 'changed', summary: { create: 2 }, error: null });
    expect(good.changes).toHaveLength(2);
    expect(good.results.map((r: { status: string }) => r.status)).toEqual(['applied', 'applied']);
    expect(down).toMatchObject({ name: 'down', status: 'failed', summary: null, changes: [], error: { code: 'listing_incomplete' } });
    expectNoCanary(run.stdout, run.stderr);
  });

  it('markdown: a table row per target, and the changes of each in a collapsed section', async () => {
    const run = await amsync(['plan', '--targets', 'targets.yaml', '--format', 'markdown']);
    expect(run.stdout).toMatch(/^### amsync plan for `access\.yaml`: fleet of 3 targets/);
    expect(run.stdout).toContain('| `good` | 🔄 changes | 2 | 0 | 0 | 0 | 0 |  |');
    expect(run.stdout).toMatch(/\| `down` \| ❌ failed \|[^\n]*nothing listens/);
    expect(run.stdout).toContain('<details><summary>target <code>good</code>');
  });
});

describe('targets: in the desired file', () => {
  it('items go to the targets their names or labels select; the file-wide default applies to the rest', async () => {
    await writeFile(
      join(dir, 'access.yaml'),
      `targets: { env: prod }
sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
  - username: dev-only
    password: { env: DEPLOY_PASSWORD }
    targets: [guarded]
apikeys:
  - name: ci
    targets: {}
`,
    );
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--selector', 'site=sp']);
    expect(run.code).toBe(0);
    expect(usernames('good')).toEqual(['deploy']);
    expect(usernames('guarded')).toEqual(['dev-only']);
    expect(emu.tenant('guarded').state().apikeys.map((k) => k.name)).toEqual(['ci']);
  });

  it('an unknown target name is an error at its position (65), and nothing is sent', async () => {
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    targets: [good, goood]\n');
    const run = await amsync(['sync', '--targets', 'targets.yaml']);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain("access.yaml:3:21: error: unknown target 'goood' — did you mean 'good'?");
    for (const name of emu.tenantNames) expect(emu.tenant(name).requests()).toEqual([]);
  });

  it('without --targets, a targets: key is an error that says it needs --targets (65)', async () => {
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    targets: [good]\n');
    const run = await amsync(['plan', '--url', emu.tenant('good').url], { AMSYNC_TOKEN: TOKEN });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('access.yaml:3:5: error: `targets:` selects targets of a fleet: give a targets file with --targets FILE');
    expect(emu.tenant('good').requests()).toEqual([]);
  });

  it('a selector that selects no target is a warning, and the run goes on', async () => {
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    targets: { site: mars }\n');
    const run = await amsync(['plan', '--targets', 'targets.yaml', '--target', 'good']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("access.yaml:3:14: warning: selector {site: mars} selects none of the 3 targets");
  });
});

describe('the targets file', () => {
  it('errors are positioned, every one at once, and a literal credential is never shown (65, nothing sent)', async () => {
    await writeFile(
      join(dir, 'targets.yaml'),
      `targets:
  - name: good
    url: ${emu.tenant('good').url}
    token: "${'CANARY-literal-token-55'}"
  - name: Bad_Name
    url: ${emu.tenant('guarded').url}
    token: { env: FLEET_TOKEN }
    lables: { site: sp }
  - name: good
    url: ${emu.tenant('good').url}/
    integratorKey: { env: NOT_SET_ANYWHERE }
`,
    );
    const run = await amsync(['plan', '--targets', 'targets.yaml']);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('targets.yaml:4:12: error: a credential is never written in the targets file: reference it with { env: NAME } or { file: PATH }');
    expect(run.stderr).toMatch(/targets\.yaml:5:11: error: "Bad_Name" is not a target name/);
    expect(run.stderr).toContain("targets.yaml:8:5: error: unknown key 'lables' — did you mean 'labels'?");
    expect(run.stderr).toContain("targets.yaml:9:11: error: target 'good' is declared twice (first as targets[0], line 2)");
    expect(run.stderr).toMatch(/targets\.yaml:10:10: error: \S+ is also the URL of targets\[0\] \(line 2\): two targets on one service would be two writers/);
    expect(run.stderr).not.toContain('CANARY-literal-token-55');
    for (const name of emu.tenantNames) expect(emu.tenant(name).requests()).toEqual([]);
  });

  it('an unset credential variable is an error for plan (65) and a warning for validate', async () => {
    const env = { FLEET_TOKEN: '' };
    const plan = await amsync(['plan', '--targets', 'targets.yaml'], env);
    expect(plan.code).toBe(65);
    expect(plan.stderr).toContain("targets.yaml:5:12: error: environment variable FLEET_TOKEN is empty (the access token of target 'good')");
    const validate = await amsync(['validate', '--targets', 'targets.yaml'], env);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toBe('access.yaml: valid — 1 SSH user, 1 apikey, 2 warnings; targets.yaml: 3 targets\n');
    expect(validate.stderr).toContain('targets.yaml:5:12: warning: environment variable FLEET_TOKEN is empty');
    for (const name of emu.tenantNames) expect(emu.tenant(name).requests()).toEqual([]);
  });

  it('--target and --selector narrow the run; a name the file lacks is a usage error (64)', async () => {
    const one = await amsync(['plan', '--targets', 'targets.yaml', '--selector', 'site=sp', '--selector', 'env=dev']);
    expect(one.stdout).toContain('Fleet: 1 target — 1 with changes');
    expect(one.stdout).toContain('== target guarded');
    const bad = await amsync(['plan', '--targets', 'targets.yaml', '--target', 'godo']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("--target 'godo': targets.yaml has no such target — did you mean 'good'?");
    const none = await amsync(['plan', '--targets', 'targets.yaml', '--selector', 'site=mars']);
    expect(none.code).toBe(64);
    expect((await amsync(['plan', '--target', 'good'])).stderr).toContain('--target selects targets of a fleet: give the targets file with --targets FILE');
    expect((await amsync(['plan', '--targets', 'targets.yaml', '--url', 'http://127.0.0.1:1'])).code).toBe(64);
  });

  it('AMSYNC_TARGETS is --targets', async () => {
    const run = await amsync(['plan', '--target', 'good'], { AMSYNC_TARGETS: 'targets.yaml' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('== target good');
  });
});

describe('saved fleet plans: amsync plan --targets --out, amsync apply PLANFILE --targets', () => {
  const plan = ['plan', '--targets', 'targets.yaml', '--selector', 'site=sp', '--out', 'fleet-plan.json', '--state-file', 'state/state.json'];
  const apply = ['apply', 'fleet-plan.json', '--targets', 'targets.yaml', '--state-file', 'state/state.json'];

  it('applies every target exactly as planned', async () => {
    const planned = await amsync(plan);
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain('Saved the fleet plan to fleet-plan.json. To apply exactly these changes: amsync apply fleet-plan.json --targets targets.yaml');
    const saved = await readFile(join(dir, 'fleet-plan.json'), 'utf8');
    expect(JSON.parse(saved)).toMatchObject({ kind: 'amsync-fleet-plan', targets: [{ name: 'good' }, { name: 'guarded' }] });
    const applied = await amsync(apply);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('Fleet: 2 targets — 2 with changes');
    expect(usernames('good')).toEqual(['deploy']);
    expect(usernames('guarded')).toEqual(['deploy']);
    expectNoCanary(saved, applied.stdout, applied.stderr);
  });

  it('refuses the whole plan when one target went stale: exit 3, nothing written anywhere', async () => {
    expect((await amsync(plan)).code).toBe(0);
    emu.tenant('guarded').seed({ sshUsers: [{ username: 'someone', level: 'n1', password: 'x' }] });
    emu.tenant('good').clearRequests();
    emu.tenant('guarded').clearRequests();
    const run = await amsync(apply);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/== target good [\s\S]*skipped: not applied: 1 other target of the plan could not be applied as planned, so nothing was written anywhere/);
    expect(run.stdout).toMatch(/== target guarded [\s\S]*refused: the saved plan fleet-plan\.json is stale/);
    expect(run.stdout).toContain('Fleet: 2 targets — 1 refused, 1 skipped');
    expect(writesTo('good')).toEqual([]);
    expect(writesTo('guarded')).toEqual([]);
    expect(usernames('good')).toEqual([]);
  });

  it('--partial applies the fresh targets, reports the stale one, and still exits 3', async () => {
    expect((await amsync(plan)).code).toBe(0);
    emu.tenant('guarded').seed({ sshUsers: [{ username: 'someone', level: 'n1', password: 'x' }] });
    const run = await amsync([...apply, '--partial']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('Fleet: 2 targets — 1 with changes, 1 refused');
    expect(usernames('good')).toEqual(['deploy']);
    expect(writesTo('guarded')).toEqual([]);
  });

  it('is not saved when a target could not be planned; a fleet plan needs --targets to apply', async () => {
    const run = await amsync(['plan', '--targets', 'targets.yaml', '--out', 'fleet-plan.json']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No plan was saved to fleet-plan.json: not every target could be planned');
    expect(existsSync(join(dir, 'fleet-plan.json'))).toBe(false);
    expect((await amsync(plan)).code).toBe(0);
    const single = await amsync(['apply', 'fleet-plan.json', '--url', emu.tenant('good').url], { AMSYNC_TOKEN: TOKEN });
    expect(single.code).toBe(64);
    expect(single.stderr).toContain('fleet-plan.json is a saved fleet plan: apply it with the targets file it was made with (--targets FILE)');
  });
});

describe('amsync export --targets FILE --target NAME', () => {
  it('exports that one target', async () => {
    emu.tenant('guarded').seed({ sshUsers: [{ username: 'alice', level: 'n1', password: 'x' }] });
    const run = await amsync(['export', '--targets', 'targets.yaml', '--target', 'guarded']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`# The actual state of ${emu.tenant('guarded').url} as a desired-state file`);
    expect(run.stdout).toContain('username: alice');
    expect((await amsync(['export', '--targets', 'targets.yaml'])).code).toBe(64);
  });
});

describe('amsync daemon --targets: flags checked before anything starts', () => {
  it('--shards needs a pod name ending in its ordinal, and a targets file (64)', async () => {
    const noOrdinal = await amsync(['daemon', '--targets', 'targets.yaml', '--shards', '3', '--listen', '127.0.0.1:0'], { HOSTNAME: 'laptop' });
    expect(noOrdinal.code).toBe(64);
    expect(noOrdinal.stderr).toContain("--shards 3 takes this replica's shard from its pod name, which must end in -<ordinal> as a StatefulSet's do; got 'laptop'");
    const outside = await amsync(['daemon', '--targets', 'targets.yaml', '--shards', '3', '--listen', '127.0.0.1:0'], { POD_NAME: 'amsync-fleet-3' });
    expect(outside.code).toBe(64);
    const single = await amsync(['daemon', '--shard', '0/3', '--url', emu.tenant('good').url], { AMSYNC_TOKEN: TOKEN });
    expect(single.code).toBe(64);
    expect(single.stderr).toContain('--shards and --shard split the targets of a fleet between replicas: give the targets file with --targets FILE');
    for (const name of emu.tenantNames) expect(emu.tenant(name).requests()).toEqual([]);
  });
});
