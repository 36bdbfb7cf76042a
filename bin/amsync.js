#!/usr/bin/env node
// Thin launcher: the CLI is built into dist/ by `npm ci` (the prepare script): compiled by tsc,
// then bundled into dist/bundle/ (bundle-cli.mjs), so that it starts without resolving and
// reading a file per module. main() bounds the heap's growth first, for the commands that need it.
import { main } from '../dist/bundle/main.js';

await main(process.argv);
