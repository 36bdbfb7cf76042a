import { describe, expect, it } from 'vitest';
import { Refresher } from '../../../src/apply/refresher.js';
import { StoreService } from '../../helpers/store-service.js';

describe('drift re-reads', () => {
  it('share one listing between failures seen before it started', async () => {
    const s = new StoreService();
    const r = new Refresher(s, { sshUsers: [], apikeys: [] });
    const a = r.mark();
    const b = r.mark();
    await Promise.all([r.refresh('apikey', a), r.refresh('apikey', b)]);
    expect(s.calls).toEqual(['listApikeys']);
  });

  it('never answer a failure with a listing that began before it (it may predate the write)', async () => {
    const s = new StoreService();
    const r = new Refresher(s, { sshUsers: [], apikeys: [] });
    const first = r.mark();
    const early = r.refresh('apikey', first);
    s.seedKey('landed-meanwhile');
    const later = r.mark();
    const fresh = await r.refresh('apikey', later);
    expect((await early).apikeys).toEqual([]); // listed before the key landed
    expect(fresh.apikeys.map((k) => k.name)).toEqual(['landed-meanwhile']);
    expect(s.calls).toEqual(['listApikeys', 'listApikeys']);
  });
});
