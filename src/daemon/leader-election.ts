import { hostname } from 'node:os';
import type { Logger } from '../obs/index.js';
import type { LeaseRef } from '../settings/index.js';
import { systemTimers } from '../time/index.js';
import type { LeaseElector } from './lease-elector.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What a replica says in its log when it gains or loses the Lease. */
export interface ElectionWording {
  readonly leading: string;
  readonly following: string;
}

/**
 * The elector of a Lease, running beside the daemon for its whole life. The identity is the
 * pod's name (POD_NAME from the downward API, else HOSTNAME, which Kubernetes sets to the pod
 * name), so a restarted pod of a StatefulSet keeps its claim. `onChange` hears every change of
 * leadership with a one-line message (the webhooks' leadership_changed).
 */
export async function startElection(
  ref: LeaseRef,
  env: Env,
  metrics: { setLeader(on: boolean): void },
  log: Logger,
  wording: ElectionWording,
  onChange: (leading: boolean, message: string) => void,
): Promise<LeaseElector> {
  const identity = env.POD_NAME || env.HOSTNAME || hostname();
  const [{ kubeLeaseStore }, { LeaseElector }] = await Promise.all([import('./kube-lease-store.js'), import('./lease-elector.js')]);
  const store = await kubeLeaseStore({ ref });
  const elector = new LeaseElector({
    store,
    identity,
    timers: systemTimers,
    onChange: (leading, detail) => {
      metrics.setLeader(leading);
      if (leading) log.info({ lease: store.describe, identity }, `leading: ${detail}; ${wording.leading}`);
      else log.warn({ lease: store.describe, identity }, `not leading: ${detail}; ${wording.following}`);
      onChange(leading, `${identity} ${leading ? 'now leads' : 'no longer leads'} (${store.describe}): ${detail}`);
    },
    onError: (error) => log.warn({ lease: store.describe, err: error instanceof Error ? error.message : String(error) }, 'leader election: the Lease could not be read or written; retrying'),
  });
  metrics.setLeader(false);
  await elector.start();
  return elector;
}
