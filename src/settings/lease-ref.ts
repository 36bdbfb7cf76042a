/** `lease:NAMESPACE/NAME`, as `--leader-elect` and AMSYNC_LEADER_ELECT take it. */
export interface LeaseRef {
  readonly namespace: string;
  readonly name: string;
}

const leaseRefPattern = /^lease:([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;

/** Parses `lease:NAMESPACE/NAME`; undefined when it is not one (the caller names the flag). */
export function parseLeaseRef(text: string): LeaseRef | undefined {
  const m = leaseRefPattern.exec(text);
  return m ? { namespace: m[1]!, name: m[3]! } : undefined;
}
