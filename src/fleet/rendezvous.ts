import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest-random-weight) hashing: a target belongs to the shard whose hash of
 * (shard, target) is highest. Every replica computes the same owner from the name alone;
 * going from N to N+1 shards moves only the targets the new shard wins (about 1/(N+1)), and
 * no target moves between old shards. Pure.
 */
export function shardOf(target: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`Expected \`shards\` to be an integer from 1 upwards, got ${shards}`);
  let best = 0;
  let bestWeight = -1n;
  for (let shard = 0; shard < shards; shard += 1) {
    const weight = createHash('sha256').update(`${shard}\0${target}`).digest().readBigUInt64BE(0);
    if (weight > bestWeight) {
      best = shard;
      bestWeight = weight;
    }
  }
  return best;
}

/** This replica's shard and how many there are. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** The targets `shard` owns, in their order. */
export function ownedTargets<T extends { readonly name: string }>(targets: readonly T[], shard: Shard): T[] {
  return targets.filter((t) => shardOf(t.name, shard.count) === shard.index);
}

/** `--shard 2/5` -> { index: 2, count: 5 }; undefined for anything else. */
export function parseShard(text: string): Shard | undefined {
  const match = /^(\d{1,4})\/(\d{1,4})$/.exec(text.trim());
  if (!match) return undefined;
  const index = Number(match[1]);
  const count = Number(match[2]);
  return count >= 1 && index < count ? { index, count } : undefined;
}

/** A StatefulSet pod's ordinal from its name (`amsync-fleet-2` -> 2); undefined without one. */
export function ordinalOf(podName: string): number | undefined {
  const match = /-(\d{1,4})$/.exec(podName);
  return match ? Number(match[1]) : undefined;
}
