import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { alternately, median, pairedRatio } from './alternate.js';
import type { BenchConfig } from './bench-config.js';
import { logOf } from './bench-runs.js';
import { runAmsync, runNode } from './cli-process.js';
import { figure, type Figure } from './figures.js';

/** A 10-line desired-state file: what a CI job's `amsync validate` typically reads. */
const tenLines = ['sshUsers:', '  - username: deploy', '    level: n1', '  - username: ops', 'apikeys:', '  - name: billing', '    roles: [3, 7]', '  - name: monitor', 'prune:', '  sshUsers: false', ''].join('\n');

/**
 * Scenario 10: a cold `amsync validate` of a 10-line file beside bare `node -e 0`, each run
 * `coldRuns` times, alternately (so a busy spell of the machine hits both): the median of the
 * pairs' ratios.
 */
export async function coldStart(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const dir = join(workDir, 'cold');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'access.yaml'), tenLines);
  const scenario = '10 cold start';
  logOf(config)(`${scenario}: \`amsync validate\` of a 10-line file and \`node -e 0\`, ${config.coldRuns} runs each`);
  const { first: validate, second: bare } = await alternately(
    config.coldRuns,
    async () => {
      const run = await runAmsync(['validate', '-f', 'access.yaml'], { cwd: dir, env: {} });
      if (run.code !== 0) throw new Error(`amsync validate exited with ${run.code}: ${run.stderr.slice(-1000)}`);
      return run;
    },
    () => runNode(['-e', '0'], { cwd: dir, env: {} }),
  );
  const wall = { validate: median(validate.map((r) => r.wallMs)), bare: median(bare.map((r) => r.wallMs)) };
  const cpu = { validate: median(validate.map((r) => r.cpuMs ?? Number.NaN)), bare: median(bare.map((r) => r.cpuMs ?? Number.NaN)) };
  const rss = { validate: median(validate.map((r) => (r.maxRssKb ?? Number.NaN) / 1024)), bare: median(bare.map((r) => (r.maxRssKb ?? Number.NaN) / 1024)) };
  figures.push(
    figure({
      id: 'cold.wallRatio',
      scenario,
      label: `\`amsync validate\` wall ÷ \`node -e 0\` wall (median runs ${wall.validate.toFixed(0)} ms and ${wall.bare.toFixed(0)} ms)`,
      value: pairedRatio(validate.map((r) => r.wallMs), bare.map((r) => r.wallMs)),
      unit: '×',
      decimals: 2,
      target: { op: '<=', value: 2.5 },
      note: `the median of ${config.coldRuns} alternating pairs' ratios, spawn to exit`,
    }),
    figure({
      id: 'cold.cpuRatio',
      scenario,
      label: `same, CPU (median runs ${cpu.validate.toFixed(0)} ms and ${cpu.bare.toFixed(0)} ms)`,
      value: pairedRatio(validate.map((r) => r.cpuMs ?? Number.NaN), bare.map((r) => r.cpuMs ?? Number.NaN)),
      unit: '×',
      decimals: 2,
    }),
    figure({ id: 'cold.validatePeakRssMb', scenario, label: `peak RSS of \`amsync validate\` (node -e 0: ${rss.bare.toFixed(0)} MB)`, value: rss.validate, unit: 'MB', decimals: 0 }),
  );
  details.cold = { runs: config.coldRuns, wall, cpu, rssMb: rss };
}
