import type { ActualApikey, ActualSshUser, ActualState, DesiredApikey, DesiredSshUser, DesiredState, SecretValue } from '../../src/model/index.js';
import type { PlanPolicy } from '../../src/plan/index.js';

export function secret(value: string): SecretValue {
  return { reveal: () => value, toString: () => '[redacted]', toJSON: () => '[redacted]' } as SecretValue;
}

export function user(username: string, extra: Partial<DesiredSshUser> = {}): DesiredSshUser {
  return { username, level: 'n1', ensure: 'present', ...extra };
}

export function key(name: string, extra: Partial<DesiredApikey> = {}): DesiredApikey {
  return { name, superuser: false, roles: [], ensure: 'present', ...extra };
}

export function desired(parts: Partial<DesiredState> = {}): DesiredState {
  return {
    sshUsers: [],
    apikeys: [],
    prune: { sshUsers: false, apikeys: false },
    protect: { sshUsers: [], apikeys: [] },
    ...parts,
  };
}

export function actual(sshUsers: ActualSshUser[] = [], apikeys: ActualApikey[] = []): ActualState {
  return { sshUsers, apikeys };
}

/** A policy without globs: protect lists are matched literally or by a trailing `*`. */
export function policyFor(state: DesiredState, overrides: Partial<PlanPolicy> = {}): PlanPolicy {
  const matches = (globs: readonly string[], k: string) => globs.some((g) => (g.endsWith('*') ? k.startsWith(g.slice(0, -1)) : g === k));
  return {
    prune: state.prune,
    isProtected: (kind, k) => matches(kind === 'sshUser' ? state.protect.sshUsers : state.protect.apikeys, k),
    passwords: { mode: 'state' },
    ...overrides,
  };
}
