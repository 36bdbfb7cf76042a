import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator, type SeedData } from '../../src/emulator/index.js';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';

const TOKEN = 'CANARY-bearer-gitops-3f9a';
const RO_TOKEN = 'CANARY-readonly-gitops-71c2';
const PASSWORD = 'CANARY-password-env-a0d4';
const FILE_PASSWORD = 'CANARY-password-file-5b6e';

let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], readOnlyTokens: [RO_TOKEN] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  emu.reset();
  emu.setFaults({ rules: [], maintenance: false });
  emu.clearRequests();
  dir = await mkdtemp(join(tmpdir(), 'amsync-gitops-'));
  await mkdir(join(dir, 'secrets'));
  await writeFile(join(dir, 'secrets', 'backup'), `${FILE_PASSWORD}\n`);
  await writeFile(join(dir, 'access.yaml'), accessFile);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const accessFile = `
sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
  - username: backup
    password: { file: secrets/backup }
  - username: old
    ensure: absent
apikeys:
  - name: ci
    roles: [2, 1]
  - name: new-key
    superuser: true
`;

/** The service before each scenario: a user to delete, one to keep, keys with drift. */
const seed: SeedData = {
  sshUsers: [
    { username: 'old', level: 'n1', password: 'x' },
    { username: 'backup', level: 'n1', password: 'y' },
  ],
  apikeys: [{ name: 'ci', roles: [4] }, { name: 'manual' }],
};

interface Run {
  env?: Record<string, string | undefined>;
  token?: string;
}

function amsync(args: string[], run: Run = {}): Promise<CliRun> {
  return runInProcess(args, {
    cwd: dir,
    env: {
      AMSYNC_URL: emu.url,
      AMSYNC_TOKEN: run.token ?? TOKEN,
      DEPLOY_PASSWORD: PASSWORD,
      ...run.env,
    },
  });
}

const writes = () => emu.requests().filter((r) => r.method !== 'GET');

/** The service's content, without what the service makes up (tokens, timestamps). */
function content() {
  const s = emu.state();
  return {
    sshUsers: s.sshUsers.map((u) => ({ id: u.id, username: u.username, level: u.level, passwordSet: u.passwordSet, passwordVersion: u.passwordVersion })),
    apikeys: s.apikeys.map((k) => ({ id: k.id, name: k.name, superuser: k.superuser, roles: k.roles.map((r) => r.id) })),
  };
}

const passwordMatches = (username: string, password: string): Promise<boolean> => checkPassword(emu.url, username, password);

async function directly(method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status}`);
}

describe('amsync plan --out, then amsync apply', () => {
  it('applies exactly what sync would: same results, same service, same passwords', async () => {
    emu.seed(seed);
    const synced = await amsync(['sync', '--json', '--rotate-passwords']);
    expect(synced.code).toBe(0);
    const viaSync = JSON.parse(synced.stdout) as Record<string, unknown>;
    const afterSync = content();

    emu.reset();
    emu.seed(seed);
    emu.clearRequests();
    // The review job has a read-only token; only the apply job may write.
    const planned = await amsync(['plan', '--out', 'plan.json', '--rotate-passwords', '--json'], { token: RO_TOKEN });
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain('Saved the plan to plan.json. To apply exactly these changes: amsync apply plan.json');
    expect(writes()).toEqual([]);
    const applied = await amsync(['apply', 'plan.json', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    const viaApply = JSON.parse(applied.stdout) as Record<string, unknown>;

    expect(viaApply.results).toEqual(viaSync.results);
    expect(viaApply.changes).toEqual(viaSync.changes);
    expect(viaApply.summary).toEqual(viaSync.summary);
    expect(content()).toEqual(afterSync);
    expect(await passwordMatches('deploy', PASSWORD)).toBe(true);
    expect(await passwordMatches('backup', FILE_PASSWORD)).toBe(true);
  });

  it('saves with `sync --dry-run --out` too; the plan file is 0600 and says what it needs', async () => {
    emu.seed(seed);
    const run = await amsync(['sync', '--dry-run', '--detailed-exitcode', '--out', 'reviewed/plan.json', '--rotate-passwords']);
    expect(run.code).toBe(2);
    expect((await stat(join(dir, 'reviewed', 'plan.json'))).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(join(dir, 'reviewed', 'plan.json'), 'utf8'));
    expect(saved).toMatchObject({
      formatVersion: 1,
      kind: 'amsync-plan',
      desiredFile: 'access.yaml',
      serviceUrl: emu.url,
      settings: { prune: { sshUsers: false, apikeys: false }, rotatePasswords: true, passwordMode: 'rotate', allowEmptyPrune: false, maxDeletes: 10 },
      passwords: [
        { username: 'backup', file: 'secrets/backup' },
        { username: 'deploy', env: 'DEPLOY_PASSWORD' },
      ],
    });
    expect(saved.actual.sshUsers).toEqual([{ id: 1, username: 'old', level: 'n1' }, { id: 2, username: 'backup', level: 'n1' }]);
    expect(writes()).toEqual([]);
  });

  it('refuses (exit 3) when the service changed since the plan, names each change, and writes nothing', async () => {
    emu.seed(seed);
    expect((await amsync(['plan', '--out', 'plan.json'])).code).toBe(0);
    const [carol] = emu.seed({ sshUsers: [{ username: 'carol', level: 'n1', password: 'z' }] }).sshUsers;
    await directly('PUT', '/api/3rdparty/apikeys/1', { roles: [1, 2] });
    await directly('DELETE', '/api/sshusers/2');
    emu.clearRequests();

    const summary = join(dir, 'step-summary.md');
    const run = await amsync(['apply', 'plan.json', '--report', 'report.json'], { env: { GITHUB_STEP_SUMMARY: summary } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error: the saved plan plan.json is stale: the service changed since the plan was made (3 items); nothing was written:');
    expect(run.stderr).toContain(`  - sshUser carol (id ${carol!.id}) was created`);
    expect(run.stderr).toContain('  - apikey ci (id 1): roles changed [4] → [1, 2]');
    expect(run.stderr).toContain('  - sshUser backup (id 2) was deleted');
    expect(run.stdout).toBe('');
    expect(writes()).toEqual([]);
    expect(emu.requests().map((r) => `${r.method} ${r.path}`).sort()).toEqual(['GET /api/3rdparty/apikeys', 'GET /api/sshusers']);

    expect(await readFile(summary, 'utf8')).toContain('| apikey | `ci` | 1 | `roles: [4] → [1, 2]` |');
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'));
    expect(report.refusal).toMatchObject({ code: 'stale_plan', serviceChanges: expect.arrayContaining([expect.objectContaining({ kind: 'sshUser', change: 'created', key: 'carol' })]) });
    expect(report.results).toBeUndefined();
  });

  it('refuses (exit 3) when the desired file changed since the plan, before any request', async () => {
    emu.seed(seed);
    expect((await amsync(['plan', '--out', 'plan.json'])).code).toBe(0);
    await writeFile(join(dir, 'access.yaml'), `${accessFile}  - name: sneaked-in\n`);
    emu.clearRequests();
    const run = await amsync(['apply', 'plan.json']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('the saved plan plan.json is stale: access.yaml changed since the plan was made; nothing was written');
    expect(emu.requests()).toEqual([]);
  });

  it('refuses (exit 3) a plan for another service, and one edited to do more than was planned', async () => {
    emu.seed(seed);
    expect((await amsync(['plan', '--out', 'plan.json'])).code).toBe(0);
    emu.clearRequests();
    const elsewhere = await amsync(['apply', 'plan.json', '--url', 'http://127.0.0.1:9']);
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain(`the plan was made for ${emu.url}, but the service configured now is http://127.0.0.1:9`);

    const saved = JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8'));
    saved.plan.changes.push({ kind: 'apikey', action: 'delete', key: 'manual', id: 2, fields: { name: { before: 'manual', after: null } } });
    await writeFile(join(dir, 'edited.json'), JSON.stringify(saved));
    const edited = await amsync(['apply', 'edited.json']);
    expect(edited.code).toBe(3);
    expect(edited.stderr).toContain('edited.json: its changes are not the ones access.yaml and the service call for');
    expect(writes()).toEqual([]);
  });

  it('refuses (exit 65) a file that is not a plan, clearly, and sends nothing', async () => {
    await writeFile(join(dir, 'tf.json'), JSON.stringify({ format_version: '1.2', terraform_version: '1.9.0', resource_changes: [] }));
    await writeFile(join(dir, 'broken.json'), '{"kind": "amsync-plan", "formatVersion": 1, "plan": ');
    const foreign = await amsync(['apply', 'tf.json']);
    expect(foreign.code).toBe(65);
    expect(foreign.stderr).toContain('tf.json is not an amsync plan file (it has no "kind": "amsync-plan")');
    const broken = await amsync(['apply', 'broken.json']);
    expect(broken.code).toBe(65);
    expect(broken.stderr).toContain('broken.json is not an amsync plan file: it is not JSON');
    const missing = await amsync(['apply', 'nowhere.json']);
    expect(missing.code).toBe(65);
    expect(missing.stderr).toContain('cannot read the plan file nowhere.json: no such file');
    expect(emu.requests()).toEqual([]);
  });

  it('refuses flags that shape a plan (64), and --out on a sync that applies', async () => {
    expect((await amsync(['apply', 'plan.json', '--prune'])).stderr).toContain('--prune shapes a new plan');
    expect((await amsync(['apply', 'plan.json', '--max-deletes', '50'])).code).toBe(64);
    const sync = await amsync(['sync', '--out', 'plan.json']);
    expect(sync.code).toBe(64);
    expect(sync.stderr).toContain('use it with `amsync plan` or `amsync sync --dry-run`');
    expect(emu.requests()).toEqual([]);
  });

  it('does not save a plan a guard refused', async () => {
    emu.seed({ count: { sshUsers: 3 } });
    const run = await amsync(['plan', '--out', 'plan.json', '--prune', '--max-deletes', '1']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('No plan was saved to plan.json: the plan was refused.');
    await expect(stat(join(dir, 'plan.json'))).rejects.toThrow();
  });
});

describe('reports', () => {
  it('--report writes the --json document plus a timestamp, 0600, for sync and apply; the step summary gets Markdown', async () => {
    emu.seed(seed);
    const summary = join(dir, 'step-summary.md');
    const env = { GITHUB_STEP_SUMMARY: summary };
    const planned = await amsync(['plan', '--out', 'plan.json', '--report', 'plan-report.json'], { env });
    expect(planned.code).toBe(0);
    const applied = await amsync(['apply', 'plan.json', '--report', 'apply-report.json', '--format', 'markdown'], { env });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^### amsync apply for `access\.yaml`\n\nApplied from the saved plan `plan\.json`, exactly as reviewed\./);

    const report = JSON.parse(await readFile(join(dir, 'apply-report.json'), 'utf8'));
    expect(report).toMatchObject({ formatVersion: 1, dryRun: false, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(report.results.map((r: { key: string; status: string }) => `${r.key}:${r.status}`)).toEqual(['deploy:applied', 'old:applied', 'ci:applied', 'new-key:applied']);
    expect((await stat(join(dir, 'apply-report.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'plan-report.json'))).mode & 0o777).toBe(0o600);

    emu.clearRequests();
    const synced = await amsync(['sync', '--report', 'sync-report.json'], { env });
    expect(synced.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'sync-report.json'), 'utf8'))).toMatchObject({ dryRun: false, summary: { create: 0, update: 0, delete: 0 } });

    const markdown = await readFile(summary, 'utf8');
    expect(markdown.match(/^### amsync (plan|apply|sync)/gm)).toEqual(['### amsync plan', '### amsync apply', '### amsync sync']);
  });

  it('no canary secret in plan files, reports or summaries: bearer tokens, passwords, apikey tokens', async () => {
    emu.seed(seed);
    const env = { GITHUB_STEP_SUMMARY: join(dir, 'step-summary.md') };
    const outputs: CliRun[] = [];
    outputs.push(await amsync(['plan', '--out', 'plan.json', '--rotate-passwords', '--report', 'r1.json', '--log-level', 'trace'], { env, token: RO_TOKEN }));
    outputs.push(await amsync(['apply', 'plan.json', '--report', 'r2.json', '--tokens-dir', 'tokens', '--log-level', 'trace', '--format', 'markdown'], { env }));
    outputs.push(await amsync(['sync', '--dry-run', '--out', 'plan2.json', '--rotate-passwords', '--report', 'r3.json', '--json', '--log-level', 'trace'], { env }));
    outputs.push(await amsync(['apply', 'plan2.json', '--report', 'r4.json', '--log-level', 'trace'], { env }));
    expect(outputs.map((o) => o.code)).toEqual([0, 0, 0, 0]);
    expect(await readFile(join(dir, 'tokens', 'new-key'), 'utf8')).toMatch(/.+/);

    const files = await Promise.all(['plan.json', 'plan2.json', 'r1.json', 'r2.json', 'r3.json', 'r4.json', 'step-summary.md'].map((f) => readFile(join(dir, f), 'utf8')));
    const apikeyTokens = emu.state().apikeys.map((k) => k.token);
    expect(apikeyTokens.length).toBeGreaterThan(0);
    const everything = [...files, ...outputs.flatMap((o) => [o.stdout, o.stderr])].join('\n');
    for (const canary of [TOKEN, RO_TOKEN, PASSWORD, FILE_PASSWORD, ...apikeyTokens]) expect(everything).not.toContain(canary);
  });
});
