import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SecretValue } from '../../../src/model/index.js';
import { readActualState, type ListApikeysOptions, type RemoteApikey, type RemoteSshUser, type ServiceReader } from '../../../src/state/index.js';

const token = (value: string): SecretValue => ({ reveal: () => value });

/** A reader over fixed listings that records what it was asked. */
function reader(users: RemoteSshUser[], keys: RemoteApikey[]): ServiceReader & { asked: (ListApikeysOptions | undefined)[] } {
  const asked: (ListApikeysOptions | undefined)[] = [];
  return {
    asked,
    listSshUsers: async () => users,
    listApikeys: async (options) => {
      asked.push(options);
      return options?.tokens === false ? keys.map(({ token: _token, ...rest }) => rest) : keys;
    },
  };
}

describe('reading the actual state keeps each id once, whatever order the listing has', () => {
  it('an item listed twice counts once, the first time it is seen, in order or not', () => {
    const ids = fc.array(fc.nat({ max: 20 }), { maxLength: 40 });
    return fc.assert(
      fc.asyncProperty(ids, async (listed) => {
        const users = listed.map((id, i) => ({ id, username: `u${id}-${i}`, level: 'n1' }));
        const { state } = await readActualState(reader(users, []));
        const firsts = new Map<number, RemoteSshUser>();
        for (const u of users) if (!firsts.has(u.id)) firsts.set(u.id, u);
        expect(state.sshUsers).toEqual([...firsts.values()]);
      }),
      { numRuns: 300 },
    );
  });

  it('an ascending listing is kept whole, and normalised (roles as sorted unique ids, no token)', async () => {
    const keys: RemoteApikey[] = [
      { id: 1, name: 'a', superuser: false, roles: [], token: token('tok-1') },
      { id: 2, name: 'b', superuser: true, roles: [{ id: 7 }, 3, 7] },
      { id: 5, name: 'c', superuser: false, roles: [1, 2] },
    ];
    const { state, tokens } = await readActualState(reader([], keys));
    expect(state.apikeys).toEqual([
      { id: 1, name: 'a', superuser: false, roles: [] },
      { id: 2, name: 'b', superuser: true, roles: [3, 7] },
      { id: 5, name: 'c', superuser: false, roles: [1, 2] },
    ]);
    expect([...tokens.keys()]).toEqual([1]);
  });
});

describe('the keys are listed without their tokens when no token sink wants them', () => {
  it('tokens: false asks the reader to leave them out, and keeps none', async () => {
    const r = reader([], [{ id: 1, name: 'a', superuser: false, roles: [], token: token('tok-1') }]);
    const { tokens } = await readActualState(r, { tokens: false });
    expect(r.asked).toEqual([{ tokens: false }]);
    expect(tokens.size).toBe(0);
  });

  it('by default the tokens are asked for and kept by key id', async () => {
    const r = reader([], [{ id: 4, name: 'a', superuser: false, roles: [], token: token('tok-4') }]);
    const { tokens } = await readActualState(r);
    expect(r.asked).toEqual([{ tokens: true }]);
    expect(tokens.get(4)?.token.reveal()).toBe('tok-4');
  });
});
