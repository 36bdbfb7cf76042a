import { Option, type Command } from 'commander';
import { approvalHashLength, normaliseApproval } from '../policy/index.js';
import { badFlag } from '../settings/index.js';
import { secretsModes, type SecretsMode } from '../app/index.js';
import { itemAddressProblem } from '../apply/index.js';
import { addConnectionOptions, addDeleteOptions, addFileOption, addLocalStateOptions, addOutputOptions, addPlanOutputOptions, type ServiceOptions } from './shared-options.js';
import { addFleetOptions, type FleetOptions } from './fleet-options.js';

export interface SyncCommandOptions extends ServiceOptions, FleetOptions {
  readonly dryRun?: boolean;
  readonly rotatePasswords?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  /** `--report FILE`: the results as JSON. */
  readonly report?: string;
  /** `--auto-approve`: apply without asking at a terminal. */
  readonly autoApprove?: boolean;
  /** `--approve HASH`, repeatable: approves gated changes (a change's hash, or the whole set's). */
  readonly approve?: readonly string[];
  /** `--secrets required|optional`. */
  readonly secrets?: SecretsMode;
  /** `--only`, `--exclude`, `--replace ADDR`, repeatable (issue 29). */
  readonly only?: readonly string[];
  readonly exclude?: readonly string[];
  readonly replace?: readonly string[];
  /** Set by `amsync rotate` (selection-flags.ts). */
  readonly selectionBy?: 'rotate';
}

/** The options of `plan`, and of `sync` besides its own. */
export function addPlanCommandOptions(cmd: Command): Command {
  addPlanOutputOptions(addDeleteOptions(addOutputOptions(addLocalStateOptions(addConnectionOptions(addFileOption(cmd))))));
  addFleetOptions(cmd);
  return addReportOption(
    cmd
      .option('--rotate-passwords', 'set every declared password, whether or not it changed')
      .option('--allow-empty-prune', 'let prune delete every item of a kind the file declares none of')
      .option('--delete-duplicate-apikeys', 'of remote apikeys sharing a declared name, keep the pinned one (else the oldest) and delete the rest, within --max-deletes')
      .addOption(
        new Option(
          '--secrets <MODE>',
          'required (default): a password secret that cannot be read is an error (exit 65); optional: plan without it (creates show it as not available, its drift is not checked); plan and sync --dry-run only',
        ).argParser(parseSecretsMode),
      )
      .option('--only <ADDR>', 'plan and change only these items (prune included): KIND:NAME-GLOB or KIND#ID, KIND sshUser or apikey; repeatable', collectAddress('--only'))
      .option('--exclude <ADDR>', 'leave these items out of the plan (KIND:NAME-GLOB or KIND#ID); repeatable', collectAddress('--exclude'))
      .option(
        '--replace <ADDR>',
        "issue a declared item's secret again: an SSH user's password is sent again; an apikey gets a successor whose token is written to the token sink (tokensDir or kubernetesSecret) before the old key is deleted; repeatable",
        collectAddress('--replace'),
      ),
  );
}

function parseSecretsMode(value: string): SecretsMode {
  const mode = secretsModes.find((m) => m === value);
  if (mode === undefined) throw badFlag('--secrets', '`required` or `optional`', value);
  return mode;
}

/** Commander's parser for a repeatable item address; a malformed one is exit 64 naming the flag. */
export function collectAddress(flag: string): (value: string, previous: readonly string[] | undefined) => string[] {
  return (value, previous) => {
    const problem = itemAddressProblem(value);
    if (problem !== undefined) throw badFlag(flag, problem, value);
    return [...(previous ?? []), value];
  };
}

/** Commander's parser for a repeatable --approve; a value that is not a hash is exit 64. */
export function collectApproval(value: string, previous: readonly string[] | undefined): string[] {
  if (normaliseApproval(value) === undefined) throw badFlag('--approve', `an approval hash (${approvalHashLength} hex digits, as the plan prints it)`, value);
  return [...(previous ?? []), value];
}

/** `--report FILE`, for every command that prints a report (plan, sync, apply). */
export function addReportOption(cmd: Command): Command {
  return cmd.option('--report <FILE>', 'also write the plan and per-item results as JSON to FILE (0600; the --json document plus a timestamp)');
}
