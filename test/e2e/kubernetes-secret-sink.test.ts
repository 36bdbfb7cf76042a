import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { forms } from '../helpers/encodings.js';
import { secretApiPerFile, type SecretBackend } from '../helpers/fake-secret-api.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';

// issue 30, item 4: apikey tokens written to a Kubernetes Secret (kubernetesSecret), against
// the emulator and a fake API server that enforces resourceVersion and RBAC verbs. The client
// library finds its kubeconfig through the process's KUBECONFIG, as kubectl does (as in
// daemon-leader-election.test.ts).

const TOKEN = 'CANARY-bearer-k8s-sink-5e2b';
const SECRET = 'amsync-tokens';
let emu: RunningEmulator;
let backend: SecretBackend;
let dir: string;

secretApiPerFile('amsync-k8s-secret-', (b, d) => {
  backend = b;
  dir = d;
});
beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.reset();
  emu.clearRequests();
  backend.secrets.clear();
  backend.requests.length = 0;
  backend.putVersions.length = 0;
  backend.allowed.clear();
  for (const verb of ['get', 'create', 'update'] as const) backend.allowed.add(verb);
  backend.beforeNextPut = undefined;
});

function amsync(args: string[], env: Record<string, string> = {}): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, KUBECONFIG: join(dir, 'kubeconfig'), ...env } });
}

const tokenOf = (name: string) => emu.state().apikeys.find((k) => k.name === name)!.token;
const apikeyCreates = () => emu.requests().filter((r) => r.method === 'POST' && r.path === '/api/3rdparty/apikeys');

/** Neither the token nor its base64 (the Secret's form) anywhere in what amsync printed. */
function expectNoToken(run: InProcessRun, token: string): void {
  for (const form of [token, Buffer.from(token).toString('base64')]) {
    expect(run.stdout).not.toContain(form);
    expect(run.stderr).not.toContain(form);
  }
}

describe('kubernetesSecret: tokens in a Kubernetes Secret', () => {
  it('`amsync sync` writes each new key\'s token under its data key, surviving a resourceVersion conflict between read and write', async () => {
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: CI deploy\n    roles: [1]\n  - name: ci-build\n');
    await writeFile(join(dir, 'settings.yaml'), `kubernetesSecret: amsync/${SECRET}\n`);
    // The Secret is there already, with another tool's key: amsync updates it in place.
    backend.handle('POST', '/api/v1/namespaces/amsync/secrets', JSON.stringify({ metadata: { name: SECRET }, data: { 'other-tool': Buffer.from('theirs').toString('base64') } }));
    const before = backend.secrets.get(SECRET)!.metadata.resourceVersion;
    // Someone else writes the Secret after amsync read it and before its update arrives.
    backend.beforeNextPut = (b) => b.touch(SECRET, 'someone-else', 'in-between');

    const run = await amsync(['sync', '--settings', 'settings.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { results: { key: string; action: string; status: string }[] };
    // What amsync reports is what the service received: two creates.
    expect(doc.results.map((r) => `${r.action} ${r.key} ${r.status}`).sort()).toEqual(['create CI deploy applied', 'create ci-build applied']);
    expect(apikeyCreates()).toHaveLength(2);

    expect(backend.value(SECRET, 'CI_20deploy')).toBe(tokenOf('CI deploy'));
    expect(backend.value(SECRET, 'ci-build')).toBe(tokenOf('ci-build'));
    expect(backend.value(SECRET, 'other-tool')).toBe('theirs');
    expect(backend.value(SECRET, 'someone-else')).toBe('in-between');
    // The first update carried the version amsync read (409), the retry the one after the other writer's.
    expect(backend.putVersions[0]).toBe(before);
    expect(backend.putVersions.length).toBeGreaterThanOrEqual(2);
    expect(new Set(backend.putVersions).size).toBe(backend.putVersions.length);
    expectNoToken(run, tokenOf('CI deploy'));
    expectNoToken(run, tokenOf('ci-build'));

    // A second sync: nothing to change, and the Secret is read but not written.
    const puts = backend.putVersions.length;
    const again = await amsync(['sync', '--settings', 'settings.yaml']);
    expect(again.code, again.stderr).toBe(0);
    expect(backend.putVersions).toHaveLength(puts);
  });

  it('a 403 on the update fails the change\'s token clearly, naming the verb and resource the RBAC lacks, and prints no token', async () => {
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-new\n');
    backend.handle('POST', '/api/v1/namespaces/amsync/secrets', JSON.stringify({ metadata: { name: SECRET }, data: {} }));
    backend.allowed.delete('update');

    const run = await amsync(['sync'], { AMSYNC_KUBERNETES_SECRET: `amsync/${SECRET}` });
    expect(run.code).toBe(1);
    expect(apikeyCreates()).toHaveLength(1); // the key exists on the service: its create is applied
    expect(run.stderr).toContain(
      `error: apikey "ci-new": cannot write the Secret amsync/${SECRET}: the Kubernetes API server refused to update it (403 Forbidden): the service account lacks the RBAC verb "update" on resource "secrets" (resourceNames: [${SECRET}]) in namespace amsync; grant get and update on it in a Role (examples/kubernetes/token-secret.yaml); its token was not written`,
    );
    expect(backend.value(SECRET, 'ci-new')).toBeUndefined();
    expectNoToken(run, tokenOf('ci-new'));
  });

  it('tokensDir and kubernetesSecret together are refused before any request (exit 64)', async () => {
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-new\n');
    emu.clearRequests();
    const run = await amsync(['sync', '--tokens-dir', 'tokens', '--kubernetes-secret', `amsync/${SECRET}`]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('tokensDir and kubernetesSecret are both set');
    expect(emu.requests()).toEqual([]);
    expect(backend.requests).toEqual([]);
  });

  it('a kubernetesSecret that is not NAMESPACE/NAME is a usage error naming the flag', async () => {
    const run = await amsync(['sync', '--kubernetes-secret', 'Amsync/tokens']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('--kubernetes-secret');
  });
});

describe('kubernetesSecret: generated SSH passwords in the same Secret', () => {
  const outputs: string[] = [];
  beforeEach(async () => {
    outputs.length = 0;
    // Each test starts without the last one's records (the emulator was reset: its ids start again).
    await rm(join(dir, '.amsync'), { recursive: true, force: true });
    // A user and an apikey of one name: their data keys must differ.
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { generate: { length: 32 } }\napikeys:\n  - name: deploy\n');
    backend.handle('POST', '/api/v1/namespaces/amsync/secrets', JSON.stringify({ metadata: { name: SECRET }, data: {} }));
  });

  async function run(args: string[]): Promise<InProcessRun> {
    const done = await amsync(args, { AMSYNC_KUBERNETES_SECRET: `amsync/${SECRET}`, AMSYNC_LOG_LEVEL: 'debug' });
    outputs.push(done.stdout, done.stderr);
    return done;
  }
  const writes = () => emu.requests().filter((r) => r.method !== 'GET');
  const userId = (name: string) => emu.state().sshUsers.find((u) => u.username === name)!.id;
  const passwordMatches = (username: string, password: string): Promise<boolean> => checkPassword(emu.url, username, password);
  /** No output, audit line or state file holds any form of these passwords (raw, base64, JSON-escaped, URL-encoded...). */
  async function expectNowhere(passwords: readonly string[], files: readonly string[]): Promise<void> {
    const texts = [...outputs, ...(await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8'))))];
    for (const form of forms(passwords)) for (const text of texts) expect(text.includes(form), 'a generated password leaked').toBe(false);
  }

  it('the password the emulator received is the one under password__<username>, beside the apikey of the same name, through a resourceVersion conflict; in no output', async () => {
    backend.beforeNextPut = (b) => b.touch(SECRET, 'someone-else', 'in-between');
    const done = await run(['sync', '--audit-log', 'audit.jsonl', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`).sort()).toEqual(['POST /api/3rdparty/apikeys', 'POST /api/sshusers']);
    const password = backend.value(SECRET, 'password__deploy')!;
    expect(password).toHaveLength(32);
    expect(await passwordMatches('deploy', password)).toBe(true);
    expect(backend.value(SECRET, 'deploy')).toBe(tokenOf('deploy'));
    expect(backend.value(SECRET, 'someone-else')).toBe('in-between');
    expect(new Set(backend.putVersions).size).toBe(backend.putVersions.length); // each retry with the version it read

    // The next sync: nothing to write, on the service or in the Secret.
    emu.clearRequests();
    const puts = backend.putVersions.length;
    const again = await run(['sync']);
    expect(again.code, again.stderr).toBe(0);
    expect(writes()).toEqual([]);
    expect(backend.putVersions).toHaveLength(puts);
    await expectNowhere([password], ['audit.jsonl', '.amsync/state.json']);
  });

  it('a refused update loses the password (exit 1, saying so); the next run generates a new one, sets it and writes it', async () => {
    backend.allowed.delete('update');
    const failed = await run(['sync']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      `could not be written to the password sink: that password is lost; the next run generates a new one and sets it (an update). cannot write the Secret amsync/${SECRET}: the Kubernetes API server refused to update it (403 Forbidden): the service account lacks the RBAC verb "update" on resource "secrets" (resourceNames: [${SECRET}]) in namespace amsync; grant get and update on it in a Role (examples/kubernetes/token-secret.yaml`,
    );
    expect(backend.value(SECRET, 'password__deploy')).toBeUndefined();

    backend.allowed.add('update');
    const plan = await run(['plan']);
    expect(plan.stdout).toContain('the generated password was not written to the sink: a new one is generated');
    emu.clearRequests();
    const recovered = await run(['sync']);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/sshusers/${userId('deploy')}`]);
    const password = backend.value(SECRET, 'password__deploy')!;
    expect(await passwordMatches('deploy', password)).toBe(true);
    await expectNowhere([password], ['.amsync/state.json']);
  });

  it('a data key someone removed is a note, as a missing file is; --replace sshUser:NAME writes a new one', async () => {
    expect((await run(['sync'])).code).toBe(0);
    const before = backend.value(SECRET, 'password__deploy')!;
    delete backend.secrets.get(SECRET)!.data['password__deploy'];
    emu.clearRequests();
    const noted = await run(['sync']);
    expect(noted.stdout).toContain('Generated password missing from the password sink (or changed there), kept as it is on the service: SSH user "deploy"');
    expect(writes()).toEqual([]);
    const replaced = await run(['sync', '--replace', 'sshUser:deploy']);
    expect(replaced.code, replaced.stderr).toBe(0);
    const after = backend.value(SECRET, 'password__deploy')!;
    expect(after).not.toBe(before);
    expect(await passwordMatches('deploy', after)).toBe(true);
    await expectNowhere([before, after], ['.amsync/state.json']);
  });
});

describe('an item whose secret the Secret cannot store under its name', () => {
  // 152 characters, 76 of them escaped (_20, _2F): a data key of 304 characters, 314 with password__.
  const long = 'x y/'.repeat(38);

  it('is refused before any request, to the service or the API server (exit 65), naming the item, the Secret and why; validate says so too', async () => {
    await rm(join(dir, '.amsync'), { recursive: true, force: true });
    await writeFile(join(dir, 'access.yaml'), `sshUsers:\n  - username: "${long}"\n    password: { generate: { length: 32 } }\n  - username: fine\n    password: { generate: { length: 32 } }\napikeys:\n  - name: "${long}"\n  - name: ok\n`);
    const env = { AMSYNC_KUBERNETES_SECRET: `amsync/${SECRET}` };
    for (const args of [['sync'], ['sync', '--json'], ['plan']]) {
      const run = await amsync(args, env);
      expect(run.code, run.stderr).toBe(65);
      expect(run.stderr).toContain(`error: the secret of 2 declared items cannot be stored in the Secret amsync/${SECRET} under its name; nothing was sent\n`);
      expect(run.stderr).toContain(
        `access.yaml:2:5: error: SSH user "${long}": its generated password cannot be stored in the password sink, the Secret amsync/${SECRET}: its data key would be 314 characters, past the 253 Kubernetes allows (each byte of the name other than a letter, a digit, - or . takes three, _XX); shorten the username (sshUsers[0].username)`,
      );
      expect(run.stderr).toContain(`access.yaml:7:5: error: apikey "${long}": its token cannot be stored in the token sink, the Secret amsync/${SECRET}: its data key would be 304 characters`);
      if (args.includes('--json')) expect((JSON.parse(run.stdout) as { error: { code: string } }).error.code).toBe('secret_sink_name');
    }
    // Nothing sent anywhere: not one request to the service, not one to the API server.
    expect(emu.requests()).toEqual([]);
    expect(backend.requests).toEqual([]);

    const validated = await amsync(['validate'], env);
    expect(validated.code).toBe(65);
    expect(validated.stderr).toContain(`access.yaml:2:5: error: SSH user "${long}": its generated password cannot be stored in the password sink, the Secret amsync/${SECRET}: its data key would be 314 characters`);
    expect(validated.stderr).toContain(`access.yaml:7:5: error: apikey "${long}"`);
    // Without a sink configured, validate knows of none and the file is valid.
    expect((await amsync(['validate'])).code).toBe(0);
  });
});
