import { copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { describeFigures, readFigures } from './helpers/figures.js';
import { root } from '../helpers/paths.js';

/**
 * Global setup of `npm run chaos`:
 * - runs every schedule against a snapshot of the build made at the start (AMSYNC_BIN), so a
 *   `npm run build` elsewhere during the minutes of the run cannot swap dist/ under it;
 * - gives the test files a place to add their figures, and at the end prints the totals
 *   (schedules run, invariant checks, bad inputs tried, fuzz requests).
 */
export function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'amsync-chaos-'));
  const build = join(dir, 'build');
  for (const part of ['bin', 'dist', 'config', 'examples']) cpSync(join(root, part), join(build, part), { recursive: true });
  copyFileSync(join(root, 'package.json'), join(build, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(build, 'node_modules'), 'dir');
  // Read by test/helpers/paths.ts (and so spawn.ts) in the workers.
  process.env.AMSYNC_BIN = join(build, 'bin', 'amsync.js');
  const file = join(dir, 'figures.jsonl');
  project.provide('chaosFiguresFile', file);
  const started = Date.now();
  return () => {
    const total = readFigures(file);
    process.stdout.write(`\nchaos run totals (${Math.round((Date.now() - started) / 1000)} s): ${describeFigures(total)}\n`);
    if (process.env.CHAOS_SEED) process.stdout.write(`(replayed CHAOS_SEED=${process.env.CHAOS_SEED})\n`);
    rmSync(dir, { recursive: true, force: true });
  };
}
