import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/**
 * Teams and governance (DESIGN.md §10, issue 19), end to end: `run(argv, io)` in process
 * against the emulator on 127.0.0.1. Several files each owning their items; the policy
 * checked on the file (65) and on the plan (3); changes that escalate privilege written only
 * with an approval bound to their hash.
 */

const TOKEN = 'CANARY-bearer-governance-9d1e';
const PASSWORD = 'CANARY-password-governance-47ab';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-governance-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await mkdir(join(dir, 'teams'));
});

function amsync(args: readonly string[], options: { stdin?: string; tty?: boolean } = {}): Promise<InProcessRun> {
  return runInProcess(args, {
    cwd: dir,
    env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, AMSYNC_LOG_LEVEL: 'warn' },
    ...options,
  });
}

const team = (name: string, text: string) => writeFile(join(dir, 'teams', name), text);
const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const keys = () => emu.state().apikeys.map((k) => ({ name: k.name, superuser: k.superuser, roles: k.roles.map((r) => r.id) }));

const ops = `sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
apikeys:
  - name: ops-ci
    roles: [1]
  - name: ops-root
    superuser: true
`;
const billing = `apikeys:
  - name: billing
    roles: [auditor]
`;
const policy = `policy:
  superuser: approve
  approveRoles: [admin]
  maxSuperuserKeys: 2
  usernamePattern: '[a-z][a-z0-9-]{1,31}'
  levels: [n1]
`;

async function threeTeams(): Promise<void> {
  await team('ops.yaml', ops);
  await team('billing.yaml', billing);
  await team('policy.yaml', policy);
}

describe('files owned by teams', () => {
  it('two files claiming one user: exit 65 naming both file:line:col, and nothing is sent', async () => {
    await team('ops.yaml', ops);
    await team('web.yaml', 'sshUsers:\n  - username: web\n    password: { env: DEPLOY_PASSWORD }\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
    const r = await amsync(['sync', '-f', 'teams']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain("teams/web.yaml:4:5: error: SSH user 'deploy' is declared in two files, teams/ops.yaml:2:5 and teams/web.yaml:4:5");
    expect(emu.requests()).toEqual([]);
    // validate says the same, offline; -f twice is the same as the folder.
    const v = await amsync(['validate', '-f', 'teams/ops.yaml', '-f', 'teams/web.yaml']);
    expect(v.code).toBe(65);
    expect(v.stderr).toContain('teams/ops.yaml:2:5 and teams/web.yaml:4:5');
  });

  // Issue 29 item 3: a former name (renamedFrom) belongs to one item, whichever file declares it.
  it('two files claiming one former name: exit 65 naming both file:line:col, and nothing is sent', async () => {
    await team('ops.yaml', 'sshUsers:\n  - username: deploy-ops\n    renamedFrom: [deploy]\n    password: { env: DEPLOY_PASSWORD }\n');
    await team('web.yaml', 'sshUsers:\n  - username: web\n    password: { env: DEPLOY_PASSWORD }\n  - username: deploy-web\n    renamedFrom: [deploy]\n    password: { env: DEPLOY_PASSWORD }\n');
    for (const command of [['sync', '--auto-approve'], ['plan']]) {
      const r = await amsync([...command, '-f', 'teams']);
      expect(r.code).toBe(65);
      expect(r.stderr).toContain("teams/web.yaml:4:5: error: former username 'deploy' (renamedFrom) is declared in two files, teams/ops.yaml:2:5 and teams/web.yaml:4:5");
    }
    expect(emu.requests()).toEqual([]);
  });

  it("every change names the file that asks for it (JSON source, text `# from`, a Markdown column); a prune delete names prune's file", async () => {
    await threeTeams();
    await team('prune.yaml', 'prune:\n  apikeys: true\n');
    emu.seed({ apikeys: [{ name: 'left-over' }] });
    const json = await amsync(['plan', '-f', 'teams', '--json']);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { changes: { key: string; action: string; source?: string }[] };
    const source = Object.fromEntries(doc.changes.map((c) => [`${c.action} ${c.key}`, c.source]));
    expect(source).toEqual({
      'create deploy': 'teams/ops.yaml:2:5',
      'create billing': 'teams/billing.yaml:2:5',
      'create ops-ci': 'teams/ops.yaml:5:5',
      'create ops-root': 'teams/ops.yaml:7:5',
      'delete left-over': 'teams/prune.yaml:1:1',
    });
    const text = await amsync(['plan', '-f', 'teams']);
    expect(text.stdout).toContain('  # apikey "billing" will be created\n  # from teams/billing.yaml:2:5\n');
    const md = await amsync(['plan', '-f', 'teams', '--format', 'markdown']);
    expect(md.stdout).toContain('| action | kind | key | id | source | approval | fields |');
    expect(md.stdout).toContain('| ➕ create | apikey | `billing` |  | `teams/billing.yaml:2:5` |  | ');
  });

  it('AMSYNC_FILE may hold several paths, separated by the path delimiter', async () => {
    await threeTeams();
    const r = await runInProcess(['validate'], { cwd: dir, env: { AMSYNC_FILE: 'teams/ops.yaml:teams/billing.yaml', DEPLOY_PASSWORD: PASSWORD } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('teams/ops.yaml, teams/billing.yaml (2 files): valid — 1 SSH user, 3 apikeys, no warnings\n');
  });
});

describe('the policy', () => {
  it('a violation in the file itself: exit 65 at the item, naming the rule, nothing sent', async () => {
    await threeTeams();
    await team('web.yaml', 'sshUsers:\n  - username: Web_Admin\n    password: { env: DEPLOY_PASSWORD }\n');
    const r = await amsync(['sync', '-f', 'teams']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(
      "teams/web.yaml:2:5: error: username 'Web_Admin' does not match the usernamePattern '[a-z][a-z0-9-]{1,31}' (policy rule usernamePattern in teams/policy.yaml:1:1) (sshUsers[0].username)",
    );
    expect(emu.requests()).toEqual([]);
    const v = await amsync(['validate', '-f', 'teams', '--json']);
    expect(v.code).toBe(65);
    expect(JSON.parse(v.stdout).errors[0]).toMatchObject({ code: 'policy_violation', rule: 'usernamePattern', position: { file: 'teams/web.yaml', line: 2, col: 5 } });
  });

  it('a forbidden role written by name in the policy and by id on a key is caught once names resolve (65, nothing written)', async () => {
    await team('ops.yaml', 'apikeys:\n  - name: ci\n    roles: [4]\n');
    await team('policy.yaml', 'policy:\n  forbiddenRoles: [admin]\n');
    expect((await amsync(['validate', '-f', 'teams'])).code).toBe(0);
    const r = await amsync(['sync', '-f', 'teams']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain("teams/ops.yaml:2:5: error: apikey 'ci' has the forbidden role 4 (policy rule forbiddenRoles in teams/policy.yaml:1:1)");
    expect(writes()).toEqual([]);
  });

  it("one caused by the service's state: maxSuperuserKeys counting unmanaged superuser keys is exit 3 naming the rule, nothing written", async () => {
    await threeTeams();
    emu.seed({ apikeys: [{ name: 'legacy-root', superuser: true }, { name: 'break-glass', superuser: true }] });
    const r = await amsync(['sync', '-f', 'teams', '--approve', '0000000000000000']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('the plan breaks the policy, so nothing was written: maxSuperuserKeys: once applied, the service would have 3 superuser apikeys, 2 of them not declared (left in place)');
    expect(writes()).toEqual([]);
  });
});

describe('the approval gate', () => {
  it('sync without a terminal refuses a superuser grant (exit 3): the rest is applied, the grant not; --approve HASH then applies it', async () => {
    await threeTeams();
    const first = await amsync(['sync', '-f', 'teams']);
    expect(first.code).toBe(3);
    const hash = /# needs approval \(superuser\): ([0-9a-f]{16})/.exec(first.stdout)?.[1];
    const setHash = /--approve ([0-9a-f]{16}) \(the change listed\)/.exec(first.stdout)?.[1];
    expect(hash).toBeDefined();
    expect(setHash).toBeDefined();
    expect(first.stderr).toContain(`error: 1 change not written: it needs approval: ${hash} (create apikey "ops-root": superuser); the other changes were applied.`);
    expect(keys().map((k) => k.name).sort()).toEqual(['billing', 'ops-ci']);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);

    // A hash of another change approves nothing: still refused.
    const wrong = await amsync(['sync', '-f', 'teams', '--approve', 'aaaaaaaaaaaaaaaa']);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('note: --approve aaaaaaaaaaaaaaaa matches no change of this plan that needs approval');

    const approved = await amsync(['sync', '-f', 'teams', '--approve', hash!]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`✓ created apikey "ops-root" (approved: ${hash})`);
    expect(keys().find((k) => k.name === 'ops-root')).toEqual({ name: 'ops-root', superuser: true, roles: [] });
    expect((await amsync(['plan', '-f', 'teams', '--detailed-exitcode'])).code).toBe(0);
  });

  it('a drift correction that re-grants superuser someone removed by hand needs approval too; the set hash approves it', async () => {
    await threeTeams();
    const setHash = /--approve ([0-9a-f]{16})/.exec((await amsync(['sync', '-f', 'teams'])).stdout)![1]!;
    expect((await amsync(['sync', '-f', 'teams', '--approve', setHash])).code).toBe(0);
    const root = emu.state().apikeys.find((k) => k.name === 'ops-root')!;
    await fetch(`${emu.url}/api/3rdparty/apikeys/${root.id}`, { method: 'PUT', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: '{"superuser": false}' });
    emu.clearRequests();
    const regrant = await amsync(['sync', '-f', 'teams', '--json']);
    expect(regrant.code).toBe(3);
    const doc = JSON.parse(regrant.stdout) as { changes: { action: string; approval?: { hash: string; rules: string[]; approved: boolean } }[]; approvals: { setHash: string; pending: string[] } };
    expect(doc.changes[0]).toMatchObject({ action: 'update', approval: { rules: ['superuser'], approved: false } });
    expect(writes()).toEqual([]);
    // The set hash of the first grant does not approve this one: another change, another hash.
    expect(doc.approvals.setHash).not.toBe(setHash);
    expect((await amsync(['sync', '-f', 'teams', '--approve', doc.approvals.setHash])).code).toBe(0);
    expect(emu.state().apikeys.find((k) => k.name === 'ops-root')!.superuser).toBe(true);
  });

  it('at a terminal, sync shows the gated changes and asks for the approval hash; yes applies only the rest', async () => {
    await threeTeams();
    const plan = await amsync(['plan', '-f', 'teams']);
    const setHash = /--approve ([0-9a-f]{16})/.exec(plan.stdout)![1]!;
    const yes = await amsync(['sync', '-f', 'teams'], { tty: true, stdin: 'yes\n' });
    expect(yes.stdout).toContain(`To apply every change, type the approval hash ${setHash}.`);
    expect(yes.stdout).toContain("'yes' applies only the 3 other changes; anything else cancels.");
    expect(yes.code).toBe(3);
    expect(keys().map((k) => k.name).sort()).toEqual(['billing', 'ops-ci']);
    const typed = await amsync(['sync', '-f', 'teams'], { tty: true, stdin: `${setHash}\n` });
    expect(typed.code).toBe(0);
    expect(keys().find((k) => k.name === 'ops-root')?.superuser).toBe(true);
  });

  it('apply of a reviewed saved plan applies its gated change: the review was the approval', async () => {
    await threeTeams();
    const planned = await amsync(['plan', '-f', 'teams', '--out', 'plan.json', '--format', 'markdown']);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('> **1 change escalates privilege (superuser) and needs approval**: marked 🔐 below.');
    const saved = JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8')) as { approvals: { setHash: string; changes: { hash: string; rules: string[] }[] }; desiredSources: { paths: string[]; files: { file: string }[] } };
    expect(saved.approvals.changes).toEqual([expect.objectContaining({ rules: ['superuser'] })]);
    expect(saved.desiredSources.paths).toEqual(['teams']);
    expect(saved.desiredSources.files.map((f) => f.file)).toEqual(['teams/billing.yaml', 'teams/ops.yaml', 'teams/policy.yaml']);
    const applied = await amsync(['apply', 'plan.json']);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`✓ created apikey "ops-root" (approved: ${saved.approvals.changes[0]!.hash})`);
    expect(keys().find((k) => k.name === 'ops-root')?.superuser).toBe(true);
  });

  it('a saved plan goes stale when any of its files changes, and says which', async () => {
    await threeTeams();
    expect((await amsync(['plan', '-f', 'teams', '--out', 'plan.json'])).code).toBe(0);
    await team('billing.yaml', `${billing}  - name: billing-2\n`);
    const r = await amsync(['apply', 'plan.json']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('the saved plan plan.json is stale: of teams, teams/billing.yaml changed since the plan was made; nothing was written');
    expect(writes()).toEqual([]);
  });

  it('approveDeletesOver: a plan with more deletes needs approval for every delete (and --approve is refused by apply)', async () => {
    await team('ops.yaml', 'apikeys:\n  - name: keep\n');
    await team('policy.yaml', 'policy:\n  approveDeletesOver: 1\nprune:\n  apikeys: true\n');
    emu.seed({ apikeys: [{ name: 'keep' }, { name: 'old-1' }, { name: 'old-2' }] });
    const r = await amsync(['sync', '-f', 'teams']);
    expect(r.code).toBe(3);
    expect(r.stdout.match(/# needs approval \(approveDeletesOver\)/g)).toHaveLength(2);
    expect(keys().map((k) => k.name).sort()).toEqual(['keep', 'old-1', 'old-2']);
    const refused = await amsync(['apply', 'plan.json', '--approve', '0123456789abcdef']);
    expect(refused.code).toBe(64);
  });
});
