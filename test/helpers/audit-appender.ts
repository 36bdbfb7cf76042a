import { AuditLog } from '../../src/audit/audit-log.js';

/**
 * Run by test/unit/audit/audit-log.test.ts as a child process (through vite-node): appends
 * audit lines to AUDIT_PATH in a tight loop, with no await in between, until it is killed, a
 * write fails, or AUDIT_MAX_LINES are written (so a child a failed test left behind stops). It says `ready N` on stdout once N lines are written (pipes are synchronous on
 * Linux, so the parent sees it while the loop runs on), and on a failure prints the error's
 * code as `failed CODE` and exits 3.
 */
const path = process.env.AUDIT_PATH!;
const readyAfter = Number(process.env.AUDIT_READY_AFTER ?? '1000');
const maxLines = Number(process.env.AUDIT_MAX_LINES ?? '100000');
const log = AuditLog.open(path, {
  revision: 'abc123',
  maxBytes: Number(process.env.AUDIT_MAX_BYTES ?? String(10 * 1024 * 1024)),
  keep: Number(process.env.AUDIT_KEEP ?? '5'),
});
// Lines of a few KiB: a write(2) of that size is where a torn line would show.
const padding = 'x'.repeat(Number(process.env.AUDIT_PADDING ?? '2000'));
try {
  for (let n = 0; n < maxLines; n += 1) {
    log.record({
      target: null,
      kind: 'sshUser',
      key: `user-${n}-${padding}`,
      id: n,
      action: 'update',
      phase: n % 2 === 0 ? 'attempt' : 'result',
      ...(n % 2 === 0 ? {} : { status: 'applied' as const }),
      fields: ['level', 'password'],
      values: { level: 'n1' },
      planHash: 'sha256:feed',
      trigger: 'schedule',
    });
    if (n + 1 === readyAfter) process.stdout.write(`ready ${readyAfter}\n`);
  }
  process.stdout.write(`done ${maxLines}\n`);
} catch (error) {
  process.stdout.write(`failed ${(error as { code?: string }).code ?? 'unknown'}\n`);
  process.exit(3);
}
