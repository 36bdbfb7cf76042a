#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the prepare script).
import { limitHeapGrowth } from '../dist/cli/heap-growth.js';
import { main } from '../dist/cli/main.js';

// Before any work: the heap grows with the live data, not with the host's memory.
limitHeapGrowth();
await main(process.argv);
