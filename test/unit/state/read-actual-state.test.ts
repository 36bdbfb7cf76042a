import { describe, expect, it } from 'vitest';
import { AmsyncError } from '../../../src/errors.js';
import type { ActualSshUser, ListApikeysOptions, ListedApikey, SecretValue } from '../../../src/model/index.js';
import { readActualState, type StateSource } from '../../../src/state/index.js';

const token = (value: string): SecretValue => ({ reveal: () => value });

/** A reader over fixed listings that records what it was asked. */
function reader(users: ActualSshUser[], keys: ListedApikey[]): StateSource & { asked: (ListApikeysOptions | undefined)[] } {
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

describe('reading the actual state takes what the service listed, and keeps the tokens apart', () => {
  // Each id once and roles as sorted ids are the service's (the client's) to give: see
  // test/unit/api/paginate.test.ts and schemas.test.ts. Reading does not do it a second time.
  it('the listing is kept whole and in order; the state holds no token, the tokens map does', async () => {
    const keys: ListedApikey[] = [
      { id: 1, name: 'a', superuser: false, roles: [], token: token('tok-1') },
      { id: 2, name: 'b', superuser: true, roles: [3, 7] },
      { id: 5, name: 'c', superuser: false, roles: [1, 2] },
    ];
    const users = [{ id: 3, username: 'u', level: 'n1' }];
    const { state, tokens } = await readActualState(reader(users, keys));
    expect(state.sshUsers).toEqual(users);
    expect(state.apikeys).toEqual([
      { id: 1, name: 'a', superuser: false, roles: [] },
      { id: 2, name: 'b', superuser: true, roles: [3, 7] },
      { id: 5, name: 'c', superuser: false, roles: [1, 2] },
    ]);
    expect(JSON.stringify(state)).not.toContain('tok-1');
    expect([...tokens.keys()]).toEqual([1]);
  });

  it('a listing that shifted is read again once; shifted twice, the read fails', async () => {
    let calls = 0;
    const shifting = (times: number): StateSource => ({
      listSshUsers: async () => {
        calls += 1;
        if (calls <= times) throw Object.assign(new AmsyncError('listing_inconsistent', 'GET /api/sshusers: id 4 was listed twice'), {});
        return [];
      },
      listApikeys: async () => [],
    });
    await expect(readActualState(shifting(1))).resolves.toMatchObject({ state: { sshUsers: [] } });
    calls = 0;
    await expect(readActualState(shifting(2))).rejects.toMatchObject({ code: 'listing_inconsistent', message: expect.stringContaining('shifted again') });
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
    expect(tokens.get(4)?.reveal()).toBe('tok-4');
  });
});
