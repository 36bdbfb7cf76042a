import { hostname } from 'node:os';
import { UsageError } from '../errors.js';
import type { LeaseRef } from '../settings/index.js';
import { quote } from '../yaml/index.js';
import { ordinalOf, parseShard, type Shard } from './rendezvous.js';

/**
 * This replica's shard: `--shard I/N`, or `--shards N` with the ordinal of a StatefulSet pod's
 * name (POD_NAME, else HOSTNAME, which Kubernetes sets to it: `amsync-fleet-2` is shard 2).
 */
export function resolveShard(opts: { readonly shards?: number; readonly shard?: string }, env: Readonly<Record<string, string | undefined>>): Shard | undefined {
  if (opts.shard !== undefined && opts.shards !== undefined) throw new UsageError('--shard I/N and --shards N both set the shard: give one', 'conflicting_flags');
  if (opts.shard !== undefined) {
    const shard = parseShard(opts.shard);
    if (!shard) throw new UsageError(`Expected \`--shard\` to be I/N with 0 ≤ I < N (the replica's shard of N, e.g. 0/3), got ${quote(opts.shard)}`, 'bad_flag_value');
    return shard;
  }
  if (opts.shards === undefined) return undefined;
  const pod = env.POD_NAME || env.HOSTNAME || hostname();
  const index = ordinalOf(pod);
  if (index === undefined) throw new UsageError(`--shards ${opts.shards} takes this replica's shard from its pod name, which must end in -<ordinal> as a StatefulSet's do; got ${quote(pod)} (POD_NAME, else HOSTNAME); or give --shard I/N`, 'bad_flag_value');
  if (index >= opts.shards) throw new UsageError(`this replica is ${quote(pod)}, ordinal ${index}, but --shards is ${opts.shards}: scale the StatefulSet and --shards together`, 'bad_flag_value');
  return { index, count: opts.shards };
}

/** The shard's Lease: `lease:NS/NAME` gives `NAME-shard-I` in NS (one Lease per shard). */
export function shardLease(ref: LeaseRef, shard: Shard | undefined): LeaseRef {
  return shard === undefined ? ref : { namespace: ref.namespace, name: `${ref.name}-shard-${shard.index}` };
}
