import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';
import { forms } from '../helpers/encodings.js';
import { echoingBodies, startHostileService, type HostileAnswer, type HostileService, type SeenRequest } from '../helpers/hostile-service.js';

// Canaries: a quote, a backslash, non-ASCII (BMP and astral), whitespace, URL-special characters.
const TOKEN = 'CANARY-bearer"hostile\\5d2c';
const ENV_PASSWORD = 'q"u\\oé';
const FILE_PASSWORD = 'tab\there "x" \\\\y ü€😀 file';
const APIKEY_TOKEN = 'CANARY+apikey/token=91af';
const OTHER_APIKEY_TOKEN = 'CANARY-apikey-zwei-ü-22';
const canaries = [TOKEN, ENV_PASSWORD, FILE_PASSWORD, APIKEY_TOKEN, OTHER_APIKEY_TOKEN];
const canaryForms = forms(canaries);

const accessFile = `
sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
  - username: backup
    password: { file: secrets/backup }
apikeys:
  - name: ci
    roles: [1]
`;

let dir: string;
let service: HostileService | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-hostile-'));
  await mkdir(join(dir, 'secrets'));
  await writeFile(join(dir, 'secrets', 'backup'), `${FILE_PASSWORD}\n`);
  await writeFile(join(dir, 'access.yaml'), accessFile);
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function hostile(answerWrite: (request: SeenRequest) => HostileAnswer | undefined): Promise<HostileService> {
  service = await startHostileService({
    token: TOKEN,
    sshUsers: [],
    apikeys: [
      { id: 7, name: 'ci', roles: [2], token: APIKEY_TOKEN },
      { id: 8, name: 'manual', token: OTHER_APIKEY_TOKEN },
    ],
    answerWrite,
  });
  return service;
}

function amsync(args: string[], url: string, env: Record<string, string> = {}): Promise<CliRun> {
  return runInProcess(args, {
    cwd: dir,
    env: { AMSYNC_URL: url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: ENV_PASSWORD, AMSYNC_RETRY_MAX_ATTEMPTS: '1', AMSYNC_STATE_FILE: join(dir, 'state.json'), ...env },
  });
}

/** No canary in any form in any of the texts. */
function expectNoCanary(channels: Record<string, string>): void {
  for (const [channel, text] of Object.entries(channels)) {
    const leaked = canaryForms.filter((form) => text.includes(form));
    expect(leaked, `${channel} holds a canary:\n${text}`).toEqual([]);
  }
}

/** A json and a text sync against the service, every output channel checked. */
async function syncEverywhere(url: string): Promise<{ json: Record<string, unknown>; text: CliRun }> {
  const summary = join(dir, 'summary.md');
  const asJson = await amsync(['sync', '--json', '--report', 'report.json', '--log-level', 'debug'], url, { GITHUB_STEP_SUMMARY: summary });
  const asText = await amsync(['sync', '--log-level', 'debug'], url);
  const asMarkdown = await amsync(['sync', '--format', 'markdown'], url);
  expect(asJson.code, asJson.stderr).toBe(1);
  expect(asText.code, asText.stderr).toBe(1);
  expectNoCanary({
    'json stdout': asJson.stdout,
    'json stderr (logs)': asJson.stderr,
    'report file': await readFile(join(dir, 'report.json'), 'utf8'),
    'step summary': await readFile(summary, 'utf8'),
    'text stdout': asText.stdout,
    'text stderr (logs)': asText.stderr,
    'markdown stdout': asMarkdown.stdout,
    'markdown stderr': asMarkdown.stderr,
  });
  return { json: JSON.parse(asJson.stdout) as Record<string, unknown>, text: asText };
}

interface Result {
  kind: string;
  key: string;
  status: string;
  error?: string;
}

const resultFor = (json: Record<string, unknown>, key: string): Result => (json.results as Result[]).find((r) => r.key === key)!;

describe('a service that echoes secrets in its error bodies never gets them printed', () => {
  it('a 400 whose structured errors quote the password JSON-escaped: shown as field, type and a scrubbed msg', async () => {
    const svc = await hostile((r) => (r.method === 'POST' && r.path === '/api/sshusers' ? { status: 400, body: echoingBodies.structured(r.body, canaries) } : undefined));
    const { json, text } = await syncEverywhere(svc.url);
    const deploy = resultFor(json, 'deploy');
    expect(deploy.status).toBe('failed');
    expect(deploy.error).toMatch(/^POST \/api\/sshusers: 400 bad request: password rule \(rejected .*\[redacted\].*\); username invalid \(you sent/);
    expect(text.stdout).toContain('✗ failed to create sshUser "deploy"');
    // The request did carry the password: the service saw it, the output does not.
    expect(svc.requests.some((r) => r.body.includes(JSON.stringify(ENV_PASSWORD)))).toBe(true);
  });

  it('a 500 whose JSON body (not the errors shape) quotes the request: a short scrubbed excerpt', async () => {
    const svc = await hostile((r) => (r.method === 'POST' && r.path === '/api/sshusers' ? { status: 500, body: echoingBodies.otherJson(r.body, canaries) } : undefined));
    const { json } = await syncEverywhere(svc.url);
    expect(resultFor(json, 'backup').error).toMatch(/^POST \/api\/sshusers: 500 internal server error: \{"error":"internal","request":".*\[redacted\]/);
  });

  it('a 502 text page that quotes the apikey tokens known from the listing', async () => {
    const svc = await hostile((r) => (r.method === 'PUT' || r.method === 'POST' ? { status: 502, body: echoingBodies.text(r.body, canaries), contentType: 'text/html' } : undefined));
    const { json } = await syncEverywhere(svc.url);
    expect(resultFor(json, 'ci').error).toMatch(/^PUT \/api\/3rdparty\/apikeys\/7: 502 bad gateway: <html><body>upstream failed for \{"roles":\[1\]\}<br>raw=\[redacted\] \| json=\[redacted\]/);
  });

  it('a plan file never holds a secret, even when the service names an item after one', async () => {
    service = await startHostileService({
      token: TOKEN,
      sshUsers: [{ id: 3, username: `echo ${JSON.stringify(ENV_PASSWORD)}`, level: 'n1' }],
      apikeys: [
        { id: 7, name: 'ci', roles: [2], token: APIKEY_TOKEN },
        { id: 8, name: `copy of ${encodeURIComponent(APIKEY_TOKEN)}`, token: OTHER_APIKEY_TOKEN },
      ],
    });
    const run = await amsync(['plan', '--out', 'plan.json', '--json'], service.url);
    expect(run.code, run.stderr).toBe(0);
    const planFile = await readFile(join(dir, 'plan.json'), 'utf8');
    expect(() => JSON.parse(planFile) as unknown).not.toThrow();
    expect(planFile).toContain('copy of [redacted]');
    expectNoCanary({ 'plan file': planFile, stdout: run.stdout, stderr: run.stderr });
    // Its snapshot no longer matches its fingerprint: apply refuses it before any write.
    const applied = await amsync(['apply', 'plan.json'], service.url);
    expect(applied.code).toBe(65);
    expect(service.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
