/**
 * Desired-state files for the benchmark, written as text (a 100k-item file in milliseconds),
 * over the emulator's synthetic items: `bench-user-<id>` and `bench-key-<id>` (level n1, no
 * superuser, no roles), ids from 1 after a reset.
 */

/** The changes a file asks for on top of `items` seeded users and keys. */
export interface ChangeMix {
  readonly userCreates: number;
  readonly keyCreates: number;
  /** Seeded keys given `roles: [1]`. */
  readonly keyUpdates: number;
  /** Seeded users and keys declared `ensure: absent`. */
  readonly userDeletes: number;
  readonly keyDeletes: number;
}

export const noChanges: ChangeMix = { userCreates: 0, keyCreates: 0, keyUpdates: 0, userDeletes: 0, keyDeletes: 0 };

/** `total` changes: half creates, a quarter updates, a quarter deletes (the deletes run last). */
export function changeMix(total: number): ChangeMix {
  const creates = Math.round(total / 2);
  const updates = Math.round(total / 4);
  const deletes = total - creates - updates;
  return {
    userCreates: Math.ceil(creates / 2),
    keyCreates: Math.floor(creates / 2),
    keyUpdates: updates,
    userDeletes: Math.ceil(deletes / 2),
    keyDeletes: Math.floor(deletes / 2),
  };
}

export function changeCount(mix: ChangeMix): number {
  return mix.userCreates + mix.keyCreates + mix.keyUpdates + mix.userDeletes + mix.keyDeletes;
}

/**
 * The reads an apply needs besides the listing: each DELETE is preceded by one GET of that
 * item (verified deletes), and an apply asks GET /api/user/info once (the scope check).
 */
export function applyReads(mix: ChangeMix): number {
  return mix.userDeletes + mix.keyDeletes + (changeCount(mix) > 0 ? 1 : 0);
}

/** The env variable new users take their password from. */
export const passwordVariable = 'BENCH_PASSWORD';

/**
 * YAML for `items` seeded users and keys, all declared as they are, plus `mix`: deletes take
 * the first ids, key updates the ids after them, creates are new names.
 */
export function desiredYaml(items: number, mix: ChangeMix = noChanges): string {
  if (mix.keyDeletes + mix.keyUpdates > items || mix.userDeletes > items) {
    throw new RangeError(`Expected at most ${items} seeded items to change, got ${mix.keyDeletes + mix.keyUpdates} keys and ${mix.userDeletes} users`);
  }
  const lines: string[] = ['sshUsers:'];
  for (let id = 1; id <= items; id += 1) {
    lines.push(`  - username: bench-user-${id}`);
    if (id <= mix.userDeletes) lines.push('    ensure: absent');
  }
  for (let n = 1; n <= mix.userCreates; n += 1) {
    lines.push(`  - username: new-user-${n}`, `    password: { env: ${passwordVariable} }`);
  }
  lines.push('apikeys:');
  for (let id = 1; id <= items; id += 1) {
    lines.push(`  - name: bench-key-${id}`);
    if (id <= mix.keyDeletes) lines.push('    ensure: absent');
    else if (id <= mix.keyDeletes + mix.keyUpdates) lines.push('    roles: [1]');
  }
  for (let n = 1; n <= mix.keyCreates; n += 1) lines.push(`  - name: new-key-${n}`, '    roles: [1]');
  lines.push('');
  return lines.join('\n');
}
