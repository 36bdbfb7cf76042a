// How the bare listings fetch a page: by node:http (the floor any client pays) or by got, set up
// as src/api/transport.ts sets it up (one instance, the same options, a stream per request, an
// agent per service): the floor a client built on got pays, got being amsync's HTTP client.
//
//   const get = bareGet('http' | 'got', token); await get(agent, absoluteUrl) -> parsed JSON
import { request } from 'node:http';

function viaHttp(token) {
  return (agent, url) =>
    new Promise((resolve, reject) => {
      const req = request(url, { agent, headers: { accept: 'application/json', authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${url} answered ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
}

async function viaGot(token) {
  const { got } = await import('got');
  // The options of the transport's shared instance (src/api/transport.ts, sharedGot).
  const instance = got.extend({
    headers: { accept: 'application/json', 'user-agent': 'amsync-bench' },
    timeout: { connect: 10_000, request: 30_000 },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    http2: false,
    https: { rejectUnauthorized: true },
  });
  return (agent, url) =>
    new Promise((resolve, reject) => {
      const stream = instance.stream(url, { method: 'GET', agent: { http: agent }, headers: { authorization: `Bearer ${token}` } });
      let status = 0;
      const chunks = [];
      stream.once('response', (response) => (status = response.statusCode));
      stream.on('data', (chunk) => chunks.push(chunk));
      stream.once('end', () => (status === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`${url} answered ${status}`))));
      stream.on('error', reject);
    });
}

export async function bareGet(client, token) {
  if (client === undefined || client === 'http') return viaHttp(token);
  if (client === 'got') return viaGot(token);
  throw new Error(`unknown client ${client}: http or got`);
}
