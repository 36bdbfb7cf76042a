// Preloaded (`node --import`) into the `amsync` process the benchmark measures: when that
// process exits, it reports its own peak RSS (getrusage's ru_maxrss, the figure
// `/usr/bin/time -v` prints) and CPU time on file descriptor 3, which the benchmark opened as
// a pipe. Nothing in amsync knows about it; run without fd 3, it does nothing.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  const line = JSON.stringify({ maxRssKb: usage.maxRSS, userCpuUs: usage.userCPUTime, systemCpuUs: usage.systemCPUTime });
  try {
    writeSync(3, `${line}\n`);
  } catch {
    // fd 3 is not open: not run by the benchmark.
  }
});
