#!/usr/bin/env node
// Thin launcher: the CLI is built into dist/ by `npm ci` (the prepare script): compiled by tsc,
// then bundled into dist/bundle/ (bundle-cli.mjs), so that it starts without resolving and
// reading a file per module.
import { limitHeapGrowth } from '../dist/bundle/heap-growth.js';
import { main } from '../dist/bundle/main.js';

// Before any work: the heap grows with the live data, not with the host's memory.
limitHeapGrowth();
await main(process.argv);
