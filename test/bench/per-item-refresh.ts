import { Agent, request } from 'node:http';

export interface RefreshTarget {
  /** e.g. `/api/sshusers`. */
  readonly route: string;
  readonly ids: readonly number[];
}

export interface RefreshResult {
  readonly calls: number;
  readonly items: number;
  readonly throttled: number;
  readonly wallMs: number;
}

/**
 * The contrast: how a Terraform-style provider refreshes its state, one `GET route/{id}` per
 * item it manages, `parallelism` at a time (terraform's default -parallelism is 10), over
 * keep-alive connections. It is given the ids (a provider keeps them in its state file), parses
 * each answer, and retries a 503/429 after its Retry-After, as go-retryablehttp does.
 */
export async function refreshPerItem(url: string, token: string, targets: readonly RefreshTarget[], parallelism: number): Promise<RefreshResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: parallelism });
  const paths = targets.flatMap((t) => t.ids.map((id) => `${t.route}/${id}`));
  let next = 0;
  let calls = 0;
  let throttled = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      const path = paths[next]!;
      next += 1;
      for (let attempt = 1; ; attempt += 1) {
        calls += 1;
        const res = await get(url, path, token, agent);
        if (res.status === 200) {
          JSON.parse(res.body);
          break;
        }
        if ((res.status === 503 || res.status === 429) && attempt < 10) {
          throttled += 1;
          const seconds = Number(res.retryAfter ?? '1');
          await new Promise((r) => setTimeout(r, Math.max(0, Number.isFinite(seconds) ? seconds : 1) * 1000));
          continue;
        }
        throw new Error(`GET ${path} answered ${res.status}: ${res.body.slice(0, 200)}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: parallelism }, worker));
  } finally {
    agent.destroy();
  }
  return { calls, items: paths.length, throttled, wallMs: performance.now() - started };
}

function get(base: string, path: string, token: string, agent: Agent): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'GET', agent, headers: { Accept: 'application/json', Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, body, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
