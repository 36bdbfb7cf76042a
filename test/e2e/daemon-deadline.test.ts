import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/daemon-deferred.js';
import { startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { cursor, json, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';

/**
 * Found by an adversarial run (issue 12): a run that never ends (a service that never answers,
 * a FIFO where a token file should be) kept `amsync_sync_in_progress` at 1, drift was never
 * corrected, and /healthz and /readyz stayed green. Now a run has a deadline.
 */

const TOKEN = 'deadline-e2e-token-51c0';
let dir: string | undefined;
let server: HostileServer | undefined;
let daemon: InProcessDaemon | undefined;

afterEach(async () => {
  await daemon?.stop();
  await server?.close();
  // A daemon stopped with a second signal exits at once; in-process, a run it left may still
  // write its state file for a moment (a process would have died): retry ENOTEMPTY.
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  daemon = server = dir = undefined;
});

describe('amsync daemon: a run past its deadline', () => {
  it('a service that never answers: the run is abandoned, /readyz goes red, and the next run goes ahead', async () => {
    let answering = false;
    const held: ServerResponse[] = [];
    server = await startHostileServer((_req, res, arrival) => {
      if (!answering) {
        held.push(res); // never answered
        return;
      }
      json(res, arrival.path === '/api/sshusers' ? { cursor: cursor(0, null), users: [] } : { cursor: cursor(0, null), apikeys: [] });
    });
    dir = await mkdtemp(join(tmpdir(), 'amsync-deadline-'));
    await writeFile(join(dir, 'access.yaml'), 'sshUsers: []\napikeys: []\n');
    daemon = await startDaemonInProcess(
      ['-f', 'access.yaml', '--url', server.url, '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--state-file', 'state.json', '--run-deadline-ms', '1500'],
      // The client's own timeout is far longer: only the run deadline can end this run.
      { cwd: dir, env: { AMSYNC_TOKEN: TOKEN, AMSYNC_HTTP_TIMEOUT_MS: '600000' } },
    );
    const d = daemon;
    await d.waitForLog((l) => l.code === 'run_deadline' && String(l.msg).includes('abandoned'), 'the run to be abandoned');
    // Its requests are cut, so it winds down; until it has, /readyz says "has not stopped".
    await d.waitForLog((l) => String(l.msg) === 'the abandoned run has wound down', 'the abandoned run to wind down');
    const ready = await d.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('the last run passed its deadline (2 s) and was abandoned');
    const metrics = parseExposition((await d.get('/metrics')).text);
    expect(metrics.value('amsync_sync_runs_abandoned_total')).toBe(1);
    expect(metrics.value('amsync_sync_in_progress')).toBe(0);
    expect((await d.get('/healthz')).status).toBe(200);

    // The service answers again; SIGHUP asks for a run at once instead of waiting for the backoff.
    answering = true;
    for (const res of held.splice(0)) res.destroy();
    const before = d.logs.length;
    d.signal('SIGHUP');
    await d.waitForLog((l) => l.msg === 'sync finished' && l.outcome === 'success', 'the next run to succeed', 15_000, before);
    await waitFor(async () => (await d.get('/readyz')).status === 200, '/readyz to be green again');
  });
});
