// The floor a fleet's no-op is compared with: every target of a multi-tenant emulator listed
// by bare node:http, each target with its own keep-alive agent (as each amsync target has its
// own client), the two kinds at once with each cursor chain serial, each answer JSON.parse'd,
// `concurrency` targets at a time, and nothing else: no file, no validation, no plan.
//
//   node bare-fleet-listing.mjs URL TOKEN PAGE_SIZE TARGETS CONCURRENCY [http|got]
//
// With `got`, each page is fetched by got as amsync's transport does (bare-get.mjs).
//
// Targets are URL/t/t1 … URL/t/tN. Prints `{"targets": N, "items": N, "pages": N}` on stdout.
// Plain JavaScript, so its own start costs what `node -e 0` costs.
import { Agent } from 'node:http';
import { bareGet } from './bare-get.mjs';

const [url, token, size, targets, concurrency, client] = process.argv.slice(2);
const get = await bareGet(client, token);
let pages = 0;
let items = 0;

async function list(agent, base, route, key) {
  for (let cursor = 0; cursor !== null; ) {
    const page = await get(agent, `${base}${route}?cursor=${encodeURIComponent(String(cursor))}&size=${size}`);
    pages += 1;
    items += page[key].length;
    cursor = page.cursor.next;
  }
}

let next = 1;
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (next <= Number(targets)) {
      const base = `${url}/t/t${next++}`;
      const agent = new Agent({ keepAlive: true, maxSockets: 2 });
      await Promise.all([list(agent, base, '/api/sshusers', 'users'), list(agent, base, '/api/3rdparty/apikeys', 'apikeys')]);
      agent.destroy();
    }
  }),
);
process.stdout.write(`${JSON.stringify({ targets: Number(targets), items, pages })}\n`);
