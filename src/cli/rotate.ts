import { Argument, type Command } from 'commander';
import { UsageError } from '../errors.js';
import type { CommandContext } from './command-context.js';
import { addWriterOptions } from './shared-options.js';
import { addPlanCommandOptions, collectAddress, collectApproval, type SyncCommandOptions } from './plan-options.js';
import { runSyncCommand } from './sync.js';

/** `amsync rotate ADDR...`: the named items' secrets issued again now, nothing else changed (`sync --only ADDR --replace ADDR`). */
export function registerRotateCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('rotate')
    .description(
      'issue the secrets of the items ADDR names again now and change nothing else (sync --only ADDR --replace ADDR): an apikey gets a successor whose token is written to the token sink (tokensDir or kubernetesSecret), its predecessor kept for its rotate: overlap (else deleted once the token is written); a generated password is made, set and written anew',
    )
    .addArgument(new Argument('<ADDR...>', 'KIND:NAME-GLOB or KIND#ID, KIND sshUser or apikey').argParser(collectAddress('ADDR')))
    .option('--dry-run', 'show the plan and change nothing')
    .option('--auto-approve', 'apply without asking for approval at a terminal; never approves a change the policy gates: that takes --approve')
    .option('--approve <HASH>', 'approve a change the policy gates: its approval hash from the plan; repeatable', collectApproval);
  addPlanCommandOptions(addWriterOptions(cmd)).action(async (addresses: string[], opts: SyncCommandOptions) => {
    // The addresses are the selection: another given beside them would be silently replaced.
    const given = [opts.only?.length ? '--only' : '', opts.replace?.length ? '--replace' : ''].filter(Boolean);
    if (given.length > 0) throw new UsageError(`${given.join(' and ')}: amsync rotate ADDR… rotates exactly the items ADDR names; name them as arguments`, 'conflicting_flags');
    await runSyncCommand({ ...opts, only: addresses, replace: addresses, selectionBy: 'rotate' }, Boolean(opts.dryRun), ctx);
  });
}
