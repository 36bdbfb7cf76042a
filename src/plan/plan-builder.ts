import type { Change, ChangeOf, ItemRef, Kind, PlanProblem, PlannedExpiry } from '../model/index.js';

/** Accumulates one kind's part of a plan. */
export class PlanBuilder<N extends Kind = Kind> {
  readonly changes: Change[] = [];
  readonly unmanaged: ItemRef[] = [];
  readonly protected: ItemRef[] = [];
  readonly problems: PlanProblem[] = [];
  /** Changes of observed items: reported, never planned (Plan.observed). */
  readonly observed: Change[] = [];
  unchanged = 0;
  /** Expiries not reached yet (Plan.expiries). */
  readonly expiries: PlannedExpiry[] = [];
  /** Plain-language notes of this kind (an expired item not created). */
  readonly notes: string[] = [];
  /** Users whose passwords exist but are not tracked by a fingerprint (see notes). */
  untrackedPasswords = 0;
  /** Existing users with a declared password that is not compared (no state file). */
  uncomparedPasswords = 0;
  /** `--secrets optional`: users whose change sends a password this run does not have. */
  readonly unavailablePasswords: string[] = [];
  /** `--secrets optional`: existing users whose password drift was not checked. */
  readonly uncheckedPasswords: string[] = [];
  /** Existing users declaring a generated password amsync never set: kept as they are (see notes). */
  readonly ungeneratedPasswords: string[] = [];
  /** Existing users whose generated password is not in the sink (missing, or another value). */
  readonly unsunkPasswords: string[] = [];

  constructor(readonly kind: N) {}

  change(change: Omit<ChangeOf<N>, 'kind'>): void {
    this.changes.push({ kind: this.kind, ...change } as ChangeOf<N> as Change);
  }

  observe(change: Omit<ChangeOf<N>, 'kind'>): void {
    this.observed.push({ kind: this.kind, ...change } as ChangeOf<N> as Change);
  }

  problem(problem: Omit<PlanProblem, 'kind'>): void {
    this.problems.push({ kind: this.kind, ...problem });
  }
}
