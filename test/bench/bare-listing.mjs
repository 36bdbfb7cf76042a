// The floor `amsync plan` is compared with: the same pages listed by bare node:http over one
// keep-alive agent, each answer JSON.parse'd, the two kinds at once with each cursor chain
// serial (as amsync lists them), and nothing else: no file, no validation, no plan.
//
//   node bare-listing.mjs URL TOKEN PAGE_SIZE
//
// Prints `{"sshUsers": N, "apikeys": N, "pages": N}` on stdout. Plain JavaScript, so its own
// start costs what `node -e 0` costs.
import { Agent, request } from 'node:http';

const [url, token, size] = process.argv.slice(2);
const agent = new Agent({ keepAlive: true, maxSockets: 2 });
let pages = 0;

function get(path) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, headers: { accept: 'application/json', authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${path} answered ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function list(route, key) {
  let count = 0;
  for (let cursor = 0; cursor !== null; ) {
    const page = await get(`${route}?cursor=${encodeURIComponent(String(cursor))}&size=${size}`);
    pages += 1;
    count += page[key].length;
    cursor = page.cursor.next;
  }
  return count;
}

const [sshUsers, apikeys] = await Promise.all([list('/api/sshusers', 'users'), list('/api/3rdparty/apikeys', 'apikeys')]);
agent.destroy();
process.stdout.write(`${JSON.stringify({ sshUsers, apikeys, pages })}\n`);
