import { escapeControls } from '../text/index.js';
import type { CtlRequest, CtlResponse, CtlStatus } from './ctl-protocol.js';

/** What `amsync ctl` prints for an answer: the daemon's message, or for `status` its state, a fact a line. */
export function ctlAnswerText(op: CtlRequest['op'], response: Extract<CtlResponse, { ok: true }>): string {
  if (op !== 'status') return `${escapeControls(response.message)}\n`;
  return renderStatus(response.status);
}

/** `ctl status` as text: one fact a line; whatever came from a person (a reason) is escaped. */
export function renderStatus(s: CtlStatus): string {
  const suspended = s.suspended ? `yes: ${s.suspended.reason} (since ${s.suspended.since}${s.suspended.by ? `, by ${s.suspended.by}` : ''})` : 'no';
  const window = s.window.windows === 0 ? 'none configured' : `${s.window.open ? 'open' : 'closed'} (${s.window.reason}; ${s.window.windows} window${s.window.windows === 1 ? '' : 's'})`;
  const run = (last: CtlStatus['lastRun']) => `${last.running ? 'running now; ' : ''}${last.outcome ?? 'none yet'}${last.lastSuccessAt ? `, last success ${last.lastSuccessAt}` : ''}${last.lastError ? `, last error ${last.lastError}` : ''}`;
  // A fleet: one line per target under the count (a fleet has no one last run).
  const lastRun = s.targets === undefined ? [`last run:   ${run(s.lastRun)}`] : [`last run:   ${s.targets.length} target${s.targets.length === 1 ? '' : 's'}`, ...s.targets.map((t) => `  ${t.name}: ${run(t)}`)];
  const lines = [
    `mode:       ${s.mode}`,
    `writes:     ${s.writes ? 'yes' : 'held: runs observe only'}`,
    `suspended:  ${suspended}`,
    `window:     ${window}`,
    ...lastRun,
    `ready:      ${s.ready.ready ? 'yes' : 'no'} (${s.ready.reason})`,
  ];
  return `${escapeControls(lines.join('\n'), { keepNewlines: true })}\n`;
}
