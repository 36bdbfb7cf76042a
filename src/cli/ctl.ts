import type { Command } from 'commander';
import type { CtlRequest } from '../daemon/index.js';
import { AmsyncError } from '../errors.js';
import { checkedFlag, resolveSettings, rules } from '../settings/index.js';
import { jsonSafe } from '../text/index.js';
import type { CommandContext } from './command-context.js';
import type { CliIo } from './io.js';
import type { ServiceOptions } from './shared-options.js';

interface CtlFlags extends ServiceOptions {
  readonly json?: boolean;
  readonly reason?: string;
  readonly overrideWindow?: boolean;
}

/**
 * `amsync ctl status|sync|suspend|resume`: asks a running daemon over its control socket
 * (`--socket`, else ctl.sock beside the state file). Exit 0 when it answered, 1 when no daemon
 * answers there (the message names the socket) or it refused the request.
 */
export function registerCtlCommand(program: Command, ctx: CommandContext): void {
  const ctl = program.command('ctl').description('control a running daemon over its Unix socket: status, sync now, suspend, resume');
  const verb = (name: string, description: string): Command =>
    ctl
      .command(name)
      .description(description)
      .option('--socket <PATH>', "the daemon's control socket (AMSYNC_DAEMON_SOCKET; default ctl.sock beside the state file)", checkedFlag('--socket', rules.path))
      .option('--state-file <PATH>', "the daemon's state file, beside which its socket is (AMSYNC_STATE_FILE; default .amsync/state.json)", checkedFlag('--state-file', rules.path))
      .option('--settings <FILE>', 'settings file (AMSYNC_SETTINGS)')
      .option('--json', "print the daemon's answer as one JSON document");
  const act = (op: CtlRequest['op']) => async (opts: CtlFlags) => {
    ctx.setExitCode(await runCtl(op, opts, ctx.io));
  };
  verb('status', "print the daemon's state: mode, suspension, sync window, last run, readiness").action(act('status'));
  verb('sync', 'ask for a run now (it joins a run in progress as its follow-up)')
    .option('--override-window', 'this one run writes even while a sync window holds writes (not while suspended)')
    .action(act('sync'));
  verb('suspend', 'observe only: runs plan and report drift and write nothing until resumed (/readyz stays ready and says so)')
    .option('--reason <TEXT>', 'why, for /readyz, the log, the webhooks and `ctl status`')
    .action(act('suspend'));
  verb('resume', 'write again after a suspend; a run is asked for at once').action(act('resume'));
}

async function runCtl(op: CtlRequest['op'], opts: CtlFlags, io: CliIo): Promise<number> {
  const settings = await resolveSettings(opts, io.env);
  const { ctlAnswerText, ctlSocketPath, sendCtlRequest } = await import('../daemon/index.js');
  const socket = ctlSocketPath(settings);
  const request: CtlRequest = {
    op,
    ...(opts.reason === undefined ? {} : { reason: opts.reason }),
    ...(opts.overrideWindow === true ? { overrideWindow: true } : {}),
    uid: typeof process.getuid === 'function' ? process.getuid() : null,
  };
  const response = await sendCtlRequest(socket, request);
  if (!response.ok) throw new AmsyncError('ctl_refused', `The daemon on ${socket} refused the request: ${response.error}`);
  io.stdout.write(opts.json === true ? `${jsonSafe(JSON.stringify({ message: response.message, ...response.status }, null, 2))}\n` : ctlAnswerText(op, response));
  return 0;
}
