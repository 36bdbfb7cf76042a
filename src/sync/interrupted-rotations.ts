import type { ActualApikey, ActualState, ChangeResult, DesiredState, PlanClock, RotatingKey, SecretValue } from '../model/index.js';
import { nextRotationAt } from '../plan/index.js';
import type { PasswordState, SecretSink } from '../secrets/index.js';

/** What the start of a run made of the successor creates a run before it began and did not finish. */
export interface InterruptedRotations {
  /** Twins taken as their predecessor's successor, by the predecessor's id (merged into the plan's clock). */
  readonly adopted: ReadonlyMap<number, RotatingKey>;
  /** Twins taken as successors whose token could not be written now: left to the planner's ambiguity (one line each, no secret). */
  readonly unresolved: readonly string[];
  /** For the plan's notes: one line per adopted successor. */
  readonly notes: readonly string[];
  /** Token files written (not by a dry-run). */
  readonly written: number;
}

/**
 * A run that creates a successor key (a rotation, `--replace`) records that it begins in the
 * state file before the POST (`rotationIntents`), and its rotation record once the token is in
 * the sink. A run killed between the two leaves a twin of the key: the service has the
 * successor, and the sink may or may not have its token. Here, before the plan, the one key of
 * the name that is neither the predecessor nor part of a recorded rotation is that successor
 * (the successor's create is planned only while one key carries the name): its token, which
 * the listing gives, is written to the sink first, then the pair is recorded as a rotation
 * whose overlap starts now, so the predecessor (whose token the sink held until this moment)
 * is deleted only after it. Nothing is deleted here, and the sink always holds a valid token.
 *
 * Left as they are (the planner reports the name ambiguous, deletes nothing): several twins,
 * a twin whose token the listing does not give or the sink cannot take. An intent with no twin
 * (the POST never took effect) or no predecessor any more is forgotten. A dry-run decides the
 * same in memory and writes nothing. `amsync apply` does not adopt: a saved plan whose changes
 * depend on an adoption (the predecessor of a key without `rotate:` deleted at once) is refused
 * as stale; one that only records the rotation applies, and the next sync adopts.
 */
export async function adoptInterruptedSuccessors(actual: ActualState, tokens: ReadonlyMap<number, SecretValue>, state: PasswordState | undefined, sink: SecretSink | undefined, now: number, dryRun: boolean): Promise<InterruptedRotations> {
  const adopted = new Map<number, RotatingKey>();
  const unresolved: string[] = [];
  const notes: string[] = [];
  let written = 0;
  const intents = state?.rotationIntents;
  if (state === undefined || intents === undefined || intents.size === 0) return { adopted, unresolved, notes, written };
  const inRotation = new Set<number>();
  for (const [id, r] of state.rotating ?? []) inRotation.add(Number(id)).add(r.successor);
  for (const [key, intent] of [...intents]) {
    const predecessor = Number(key);
    const listed = actual.apikeys.some((k) => k.id === predecessor);
    const twins = actual.apikeys.filter((k) => k.name === intent.name && k.id !== predecessor && !inRotation.has(k.id));
    if (!listed || twins.length === 0) {
      if (!dryRun) state.recordRotationIntent?.(predecessor, null);
      continue;
    }
    const twin = twins[0]!;
    const token = tokens.get(twin.id);
    if (twins.length > 1 || token === undefined || sink === undefined) {
      unresolved.push(`apikey "${intent.name}": the successor of id ${predecessor} is not known (${twins.length > 1 ? `${twins.length} twins` : token === undefined ? 'its token was not listed' : 'no token sink'})`);
      continue;
    }
    const record = { successor: twin.id, since: now };
    // The killed run may have written it already (the write then changes nothing): the note says which.
    let already = false;
    if (!dryRun) {
      try {
        if (await sink.write(intent.name, token)) written += 1;
        else already = true;
      } catch (error) {
        unresolved.push(`apikey "${intent.name}": the token of id ${twin.id} (the successor of id ${predecessor}) could not be written: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      state.recordRotating?.(predecessor, record);
      state.recordRotationIntent?.(predecessor, null);
      // Its age counts from its create, which began at the intent.
      state.recordCreated?.('apikey', twin.id, intent.startedAt);
    }
    adopted.set(predecessor, record);
    const where = already ? `was already in ${sink.describe}` : `${dryRun ? 'is' : 'was'} written to ${sink.describe} first`;
    notes.push(`apikey "${intent.name}": id ${twin.id} is the successor of id ${predecessor} that an interrupted run created; its token ${where}, and the rotation goes on from there.`);
  }
  if (!dryRun && state.dirty) await state.save();
  return { adopted, unresolved, notes, written };
}

/** The plan's clock with the adopted successors among its rotations (a dry-run's are in memory only). */
export function withAdopted(clock: PlanClock, adopted: ReadonlyMap<number, RotatingKey>): PlanClock {
  if (adopted.size === 0) return clock;
  return { ...clock, rotating: new Map([...(clock.rotating ?? []), ...adopted]) };
}

/** `rotationWakeAt` of a run's outcome: when the next rotation falls due or an overlap ends; nothing when none is ahead (or no key rotates). */
export function rotationWake(desired: DesiredState, keys: readonly Pick<ActualApikey, 'id' | 'name'>[], clock: PlanClock): { rotationWakeAt?: number } {
  if (!desired.apikeys.some((k) => k.rotate !== undefined)) return {};
  const at = nextRotationAt(desired.apikeys, keys, clock);
  return at === undefined ? {} : { rotationWakeAt: at };
}

/** The apikeys as a run left them: the listing without the keys it deleted, with the keys it created. */
export function keysAfter(listed: readonly ActualApikey[], results: readonly ChangeResult[]): Pick<ActualApikey, 'id' | 'name'>[] {
  const applied = results.filter((r) => r.kind === 'apikey' && r.status === 'applied' && typeof r.id === 'number');
  const deleted = new Set(applied.filter((r) => r.action === 'delete').map((r) => r.id));
  const created = applied.filter((r) => r.action === 'create').map((r) => ({ id: r.id as number, name: r.key }));
  return [...listed.filter((k) => !deleted.has(k.id)), ...created];
}
