import type { ActualState, ChangeResult, DesiredState, Plan, SecretValue } from '../model/index.js';
import type { PlanPolicy } from '../plan/index.js';
import { fingerprint } from '../secrets/fingerprint.js';
import type { PasswordState } from '../secrets/state-file.js';
import type { TokenSink } from '../secrets/token-sink.js';
import type { ActualStateRead } from '../state/index.js';
import { applyPlan } from './apply-plan.js';
import type { ServiceWriter } from './service-writer.js';

export interface ExecuteInput {
  readonly plan: Plan;
  readonly desired: DesiredState;
  /** The listing the plan was computed from, with the tokens it carried. */
  readonly actual: ActualState;
  readonly tokens: ActualStateRead['tokens'];
  readonly policy: PlanPolicy;
  readonly service: ServiceWriter;
  readonly passwordState?: PasswordState;
  readonly tokenSink?: TokenSink;
  readonly onResult?: (result: ChangeResult) => void;
}

export interface ExecuteOutcome {
  readonly results: readonly ChangeResult[];
  readonly tokensWritten: number;
}

/**
 * Applies a plan and keeps what lives beside the service: applied password fingerprints (the
 * state file) and apikey token files. Shared by `sync` and `amsync apply PLANFILE`, so a saved
 * plan is applied exactly as a sync would apply it.
 */
export async function executePlan(input: ExecuteInput): Promise<ExecuteOutcome> {
  let tokensWritten = 0;
  const sink = input.tokenSink;
  const writeToken = async (name: string, token: SecretValue) => {
    if (sink && (await sink.write(name, token))) tokensWritten += 1;
  };
  const state = input.passwordState;
  const results = await applyPlan(input.plan, {
    writer: input.service,
    desired: input.desired,
    actual: input.actual,
    policy: input.policy,
    passwords: state && {
      record: (id, password) => state.record(id, fingerprint(state.key, password)),
      forget: (id) => state.forget(id),
    },
    onToken: writeToken,
    onResult: input.onResult,
  });
  await state?.save();
  if (sink) {
    // Keep the token files of every declared key current, not only of new ones: a sidecar
    // then repairs a deleted or stale file at its next run.
    const declared = new Set(input.desired.apikeys.filter((k) => k.ensure === 'present').map((k) => k.name));
    const seen = new Map<string, number>();
    for (const { name } of input.tokens.values()) seen.set(name, (seen.get(name) ?? 0) + 1);
    for (const { name, token } of input.tokens.values()) {
      if (declared.has(name) && seen.get(name) === 1) await writeToken(name, token);
    }
  }
  return { results, tokensWritten };
}
