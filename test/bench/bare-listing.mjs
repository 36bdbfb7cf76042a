// The floor `amsync plan` is compared with: the same pages listed by bare node:http over one
// keep-alive agent, each answer JSON.parse'd, the two kinds at once with each cursor chain
// serial (as amsync lists them), and nothing else: no file, no validation, no plan.
//
//   node bare-listing.mjs URL TOKEN PAGE_SIZE [http|got]
//
// With `got`, each page is fetched by got as amsync's transport does (bare-get.mjs): the floor
// of a client that keeps got.
//
// Prints `{"sshUsers": N, "apikeys": N, "pages": N}` on stdout. Plain JavaScript, so its own
// start costs what `node -e 0` costs.
import { Agent } from 'node:http';
import { bareGet } from './bare-get.mjs';

const [url, token, size, client] = process.argv.slice(2);
const fetchPage = await bareGet(client, token);
const agent = new Agent({ keepAlive: true, maxSockets: 2 });
let pages = 0;

const get = (path) => fetchPage(agent, `${url}${path}`);

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
