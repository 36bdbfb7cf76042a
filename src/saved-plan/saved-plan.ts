import type { ActualState, Change, DesiredState, GateRule, PerKind, Plan } from '../model/index.js';
import { apikeyKind, listedItem, sshUserKind } from '../model/index.js';
import type { PasswordPolicy, SelectionFlags } from '../plan/index.js';
import { summarize } from '../plan/index.js';

export const savedPlanKind = 'amsync-plan';
/** Changes only with a breaking change to the file; `amsync apply` reads this version only. */
export const savedPlanFormatVersion = 1;

/** The settings that shaped the plan; `amsync apply` uses these, not its own flags. */
export interface SavedPlanSettings {
  /** Effective prune per kind: the file's `prune`, or `--prune`. */
  readonly prune: PerKind<boolean>;
  readonly rotatePasswords: boolean;
  /** How passwords were compared: `state` (fingerprints), `create-only` or `rotate`. */
  readonly passwordMode: PasswordPolicy['mode'];
  readonly allowEmptyPrune: boolean;
  readonly maxDeletes: number;
  /** `--delete-duplicate-apikeys` was given (absent: not). */
  readonly deleteDuplicateApikeys?: boolean;
  /**
   * `--only`, `--exclude`, `--replace` as given (absent: none). `amsync apply` compiles them
   * again, checks every saved change lies inside them, and plans with them to compare.
   */
  readonly selection?: SelectionFlags;
  /** The service was observed as a whole (a target with `mode: observe`; absent: not). */
  readonly observe?: boolean;
}

/**
 * Where the password of a user the plan sends one to comes from. A reference, never a value:
 * the value is read again from the same place when the plan is applied. `file` is relative to
 * the desired file's folder, as written in it, so the plan works on another machine.
 */
export type PasswordReference =
  | { readonly username: string; readonly env: string }
  | { readonly username: string; readonly file: string }
  | { readonly username: string; readonly literal: true };

/**
 * A saved plan (`amsync plan --out`): the changes exactly as planned, and what they were
 * planned from, so that `amsync apply` can refuse when the file or the service moved. It
 * holds no secret: passwords are `(sensitive)` in the changes and references in `passwords`;
 * apikey tokens are not part of the listing.
 */
export interface SavedPlan {
  readonly formatVersion: typeof savedPlanFormatVersion;
  readonly kind: typeof savedPlanKind;
  /** The amsync that made it; another version may plan differently, so apply refuses. */
  readonly amsyncVersion: string;
  /** ISO-8601. */
  readonly createdAt: string;
  /** The desired-state file as given on the command line (or by AMSYNC_FILE); several: joined by ", ". */
  readonly desiredFile: string;
  /** sha256 (hex) of the desired file's bytes; of several files, filesHash over them. */
  readonly desiredFileHash: string;
  /**
   * Present when the state came from several files or a folder: `-f` as given (apply reads
   * the same), and every file read with its hash, so a stale plan names the file that moved.
   */
  readonly desiredSources?: SavedDesiredSources;
  /**
   * The changes that needed an approval when the plan was made (README, "Teams and governance"): `amsync apply`
   * applies them, the review of the saved plan being their approval, after checking that the
   * policy gates exactly these again.
   */
  readonly approvals?: SavedApprovals;
  readonly serviceUrl: string;
  readonly settings: SavedPlanSettings;
  /** stateFingerprint of `actual`. */
  readonly actualFingerprint: string;
  readonly plan: Plan;
  readonly passwords: readonly PasswordReference[];
  /** The normalised listing the plan was computed from, by id: explains what changed since. */
  readonly actual: ActualState;
}

export interface SavedDesiredSources {
  readonly paths: readonly string[];
  readonly recursive?: boolean;
  readonly files: readonly { readonly file: string; readonly hash: string }[];
}

export interface SavedApprovals {
  /** The hash of the whole set. */
  readonly setHash: string;
  /** Each gated change: its index in `plan.changes`, hash and rules. */
  readonly changes: readonly { readonly index: number; readonly hash: string; readonly rules: readonly GateRule[] }[];
}

export type SavedPlanInput = Omit<SavedPlan, 'formatVersion' | 'kind' | 'actual'> & { readonly actual: ActualState };

/** Builds a saved plan; the snapshot is sorted by id so that equal listings save equally. */
export function toSavedPlan(input: SavedPlanInput): SavedPlan {
  return {
    formatVersion: savedPlanFormatVersion,
    kind: savedPlanKind,
    amsyncVersion: input.amsyncVersion,
    createdAt: input.createdAt,
    desiredFile: input.desiredFile,
    desiredFileHash: input.desiredFileHash,
    ...(input.desiredSources === undefined ? {} : { desiredSources: input.desiredSources }),
    serviceUrl: input.serviceUrl,
    settings: input.settings,
    actualFingerprint: input.actualFingerprint,
    plan: input.plan,
    ...(input.approvals === undefined ? {} : { approvals: input.approvals }),
    passwords: input.passwords,
    actual: {
      sshUsers: [...input.actual.sshUsers].sort((a, b) => a.id - b.id).map((u) => listedItem(sshUserKind, u, true)),
      apikeys: [...input.actual.apikeys].sort((a, b) => a.id - b.id).map((k) => listedItem(apikeyKind, k, true)),
    },
  };
}

/**
 * The plan file's text: pretty JSON, except the listing snapshot, which is one item per line
 * (it is the bulk of the file: 100k items stay a few MB and a diff of two plans stays readable).
 */
export function serialiseSavedPlan(saved: SavedPlan): string {
  const { actual, plan, passwords, approvals, ...head } = saved;
  // Where each change comes from is worth keeping only when there are several files to tell apart.
  const doc = { ...head, plan: { summary: summarize(plan), ...planDocument(plan, saved.desiredSources !== undefined) }, ...(approvals ? { approvals } : {}), passwords };
  const text = JSON.stringify(doc, null, 2);
  const rows = (items: readonly object[]) => (items.length === 0 ? '[]' : `[\n${items.map((i) => `      ${JSON.stringify(i)}`).join(',\n')}\n    ]`);
  const snapshot = `  "actual": {\n    "sshUsers": ${rows(actual.sshUsers)},\n    "apikeys": ${rows(actual.apikeys)}\n  }`;
  // `text` ends with "\n}": put the snapshot last, inside the top-level object.
  return `${text.slice(0, -2)},\n${snapshot}\n}\n`;
}

function planDocument(plan: Plan, sources: boolean): Record<string, unknown> {
  return {
    changes: plan.changes.map((c) => changeDocument(c, sources)),
    unchanged: plan.unchanged,
    unmanaged: plan.unmanaged.map((u) => ({ kind: u.kind, key: u.key, id: u.id })),
    protected: plan.protected.map((p) => ({ kind: p.kind, key: p.key, id: p.id })),
    problems: plan.problems.map((p) => ({ kind: p.kind, key: p.key, code: p.code, message: p.message, ...(p.source ? { source: p.source } : {}) })),
    notes: [...plan.notes],
    // Made with `--secrets optional` without some passwords: apply checks what this plan could not.
    ...(plan.passwordsUnavailable ? { passwordsUnavailable: plan.passwordsUnavailable } : {}),
    ...(plan.selection === undefined ? {} : { selection: plan.selection }),
    // Issue 29: present only when used, so a plan without them saves the same bytes as before.
    ...(plan.observed ? { observed: plan.observed.map((c) => changeDocument(c, sources)) } : {}),
    ...(plan.ignored ? { ignored: plan.ignored.map((i) => ({ kind: i.kind, field: i.field, keys: i.keys === 'all' ? 'all' : [...i.keys] })) } : {}),
    // Issue 30: present only when an item declares an expiry still ahead (an expired one is a delete, reason `expired`).
    ...(plan.expiries ? { expiries: plan.expiries.map((e) => ({ kind: e.kind, key: e.key, id: e.id, expiresAt: e.expiresAt, remainingSeconds: e.remainingSeconds })) } : {}),
  };
}

function changeDocument(c: Change, sources: boolean): Record<string, unknown> {
  return {
    kind: c.kind,
    action: c.action,
    key: c.key,
    id: c.id,
    fields: c.fields,
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.renamedFrom !== undefined ? { renamedFrom: c.renamedFrom } : {}),
    ...(sources && c.source !== undefined ? { source: c.source } : {}),
    ...(c.replaces !== undefined ? { replaces: c.replaces } : {}),
    ...(c.replaced === true ? { replaced: true } : {}),
  };
}

/**
 * The password references of the users this plan sends a password to. `showFile` turns the
 * model's absolute path back into one relative to the desired file (the caller knows paths).
 */
export function passwordReferences(plan: Plan, desired: DesiredState, showFile: (absPath: string) => string): PasswordReference[] {
  const users = new Map(desired.sshUsers.map((u) => [u.username, u]));
  const refs: PasswordReference[] = [];
  const seen = new Set<string>();
  for (const c of plan.changes) {
    if (c.kind !== 'sshUser' || !('password' in c.fields) || seen.has(c.key)) continue;
    seen.add(c.key);
    const ref = users.get(c.key)?.passwordRef;
    if (ref?.kind === 'env') refs.push({ username: c.key, env: ref.name });
    else if (ref?.kind === 'file') refs.push({ username: c.key, file: showFile(ref.path) });
    else refs.push({ username: c.key, literal: true });
  }
  return refs;
}
