import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { waitFor } from './daemon-deferred.js';
import { startDaemonInProcess, type InProcessDaemon } from './in-process.js';

/**
 * A daemon whose status page has something in every section, against the emulator: a change
 * applied (the delete of a remote apikey whose name is markup), a failed create with its
 * reason (the emulator refuses it), a superuser grant pending approval, an expiry, and an audit
 * log. The e2e test (test/e2e/status-page.test.ts) and the browser test (test/slow/) share it.
 */
export const statusTokens = { token: 'CANARY-status-bearer-7f3c', password: 'CANARY-status-password-2a9d' } as const;
/** A remote name that would run script if the page put it in unescaped. */
export const hostileName = '<img src=x onerror=alert(1)>';
/** A name with a quote, an ampersand and a right-to-left override. */
export const trickyName = 'it\'s "q" & co\u202egnp.exe';
export const expiresAt = '2099-06-30T12:00:00.000Z';

const access = `sshUsers:
  - username: deploy
    level: n1
    password: { env: DEPLOY_PASSWORD }
    expires: ${expiresAt}
  - username: zz-refused
    level: n1
    password: { env: DEPLOY_PASSWORD }
apikeys:
  - name: ops-root
    superuser: true
`;

/** The emulator refuses the second SSH user create (zz-refused) with a one-line reason. */
const refuseSecondCreate = { rules: [{ label: 'refuse', method: 'POST', path: '^/api/sshusers$', after: 1, times: 1, status: 422, errors: [{ field: 'username', type: 'rule' as const, msg: 'refused by the status scenario' }] }] };

async function files(dir: string): Promise<void> {
  await mkdir(join(dir, 'teams'), { recursive: true });
  await writeFile(join(dir, 'teams', 'access.yaml'), access);
  await writeFile(join(dir, 'teams', 'policy.yaml'), 'policy:\n  superuser: approve\n');
  await writeFile(join(dir, 'settings.yaml'), 'daemon:\n  debounceMs: 0\n');
}

const env = (dir: string) => ({ AMSYNC_TOKEN: statusTokens.token, FLEET_TOKEN: statusTokens.token, DEPLOY_PASSWORD: statusTokens.password, AMSYNC_AUDIT_LOG: join(dir, 'audit.jsonl'), AMSYNC_INITIAL_RATE: '1000' });

/** `amsync daemon` of one service, after its first run. */
export async function singleServiceScenario(dir: string): Promise<{ emulator: RunningEmulator; daemon: InProcessDaemon }> {
  await files(dir);
  const emulator = await startEmulator({ tokens: [statusTokens.token] });
  emulator.seed({ apikeys: [{ name: hostileName }, { name: trickyName }] });
  emulator.setFaults(refuseSecondCreate);
  const args = ['-f', 'teams', '--url', emulator.url, '--prune', '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--state-file', 'state.json', '--settings', 'settings.yaml'];
  const daemon = await startDaemonInProcess(args, { cwd: dir, env: env(dir) });
  await firstRunsOver(daemon, 1);
  return { emulator, daemon };
}

/** Waits until /status.json shows a finished run for each of `targets` targets. */
async function firstRunsOver(daemon: InProcessDaemon, targets: number): Promise<void> {
  await waitFor(async () => {
    const doc = JSON.parse((await daemon.get('/status.json')).text) as { targets: { lastRun: unknown }[] };
    return doc.targets.length === targets && doc.targets.every((t) => t.lastRun !== null);
  }, 'the first run of every target');
}

/** `amsync daemon --targets` of two tenants (`blue` as the single service's, `green` untouched), after their first runs. */
export async function fleetScenario(dir: string): Promise<{ emulator: RunningTenants; daemon: InProcessDaemon }> {
  await files(dir);
  const emulator = await startEmulator({ tokens: [statusTokens.token], tenants: ['blue', 'green'] });
  emulator.tenant('blue').seed({ apikeys: [{ name: hostileName }] });
  emulator.tenant('blue').setFaults(refuseSecondCreate);
  const targets = ['blue', 'green'].map((name) => `  - name: ${name}\n    url: ${emulator.tenant(name).url}\n    token: { env: FLEET_TOKEN }\n`).join('');
  await writeFile(join(dir, 'targets.yaml'), `targets:\n${targets}`);
  const args = ['--targets', 'targets.yaml', '-f', 'teams', '--prune', '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--state-file', 'state/state.json', '--settings', 'settings.yaml'];
  const daemon = await startDaemonInProcess(args, { cwd: dir, env: env(dir) });
  await firstRunsOver(daemon, 2);
  return { emulator, daemon };
}
