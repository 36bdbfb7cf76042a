import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { exportHeader, verifyRoundTrip, writeWithBackpressure } from '../../../src/app/index.js';
import type { ActualState, DesiredState } from '../../../src/model/index.js';
import { desiredFromActual, parseDesired, stringifyDesired, stringifyDesiredPieces, type DesiredPiece } from '../../../src/desired/index.js';
import { plan } from '../../../src/plan/index.js';
import { actual } from '../../helpers/plan-fixtures.js';

const users = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i + 1, username: `user-${i + 1}`, level: i % 5 === 0 ? 'n2' : 'n1' }));
const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i + 1, name: i % 7 === 0 ? 'shared' : `key-${i + 1}`, superuser: i % 3 === 0, roles: i % 2 === 0 ? [1, 4] : [] }));

function exportOf(state: ActualState) {
  const exported = desiredFromActual(state);
  const header = `${exportHeader('http://127.0.0.1:8080', undefined, exported)}\n\n`;
  const pieces = () => stringifyDesiredPieces(exported.desired, { omitDefaults: true });
  const planAgainst = (desired: DesiredState) => plan(desired, state, { prune: desired.prune, isProtected: () => false, passwords: { mode: 'create-only' } });
  return { exported, header, pieces, planAgainst };
}

describe('the export is written and checked piece by piece', () => {
  it('the pieces join to the whole text, and each piece of items is a document of those items alone', () => {
    const state = actual(users(2300), keys(1200));
    const { exported, pieces } = exportOf(state);
    const all = [...pieces()];
    expect(all.map((p) => p.text).join('')).toBe(stringifyDesired(exported.desired, { omitDefaults: true }));
    const items = all.filter((p) => p.kind === 'items');
    expect(items.map((p) => p.items.length)).toEqual([1000, 1000, 300, 1000, 200]);
    for (const piece of items) {
      const parsed = parseDesired(`${piece.list}:\n${piece.text}`, { file: 'piece', env: {}, readSecretFile: () => new Error('none') });
      expect(parsed.errors).toEqual([]);
      expect(parsed.value![piece.list].map((i) => ('username' in i ? i.username : i.name))).toEqual(piece.items.map((i) => ('username' in i ? i.username : i.name)));
    }
  });

  it('a file that round-trips passes, and its size is that of the whole text', () => {
    const state = actual(users(1500), keys(1500));
    const { exported, header, pieces, planAgainst } = exportOf(state);
    const text = header + stringifyDesired(exported.desired, { omitDefaults: true });
    expect(verifyRoundTrip(header, pieces(), exported.desired, planAgainst, null)).toBe(Buffer.byteLength(text));
  });

  it('a piece whose text does not read back as its items is caught, and nothing is written', () => {
    const state = actual(users(1200), keys(10));
    const { exported, header, pieces, planAgainst } = exportOf(state);
    const tampered = function* (): Generator<DesiredPiece> {
      for (const p of pieces()) yield p.kind === 'items' && p.list === 'sshUsers' ? { ...p, text: p.text.replace('user-1050\n', 'user-1050x\n') } : p;
    };
    expect(() => verifyRoundTrip(header, tampered(), exported.desired, planAgainst, null)).toThrow(
      expect.objectContaining({ code: 'export_invalid', message: expect.stringContaining('read back differently') }),
    );
  });

  it('a name declared in two pieces is caught, as the file check would catch it', () => {
    const state = actual(users(1200), []);
    const { exported, header, pieces, planAgainst } = exportOf(state);
    const twice = function* (): Generator<DesiredPiece> {
      for (const p of pieces()) {
        yield p;
        if (p.kind === 'items') yield p;
      }
    };
    expect(() => verifyRoundTrip(header, twice(), exported.desired, planAgainst, null)).toThrow(expect.objectContaining({ code: 'export_invalid', message: expect.stringContaining('declared twice') }));
  });

  it('a written state that would change the service is caught', () => {
    const state = actual(users(3), keys(3));
    const { exported, header, pieces } = exportOf(state);
    const other = actual(users(4), keys(3));
    const planAgainstOther = (desired: DesiredState) => plan(desired, other, { prune: { sshUsers: true, apikeys: false }, isProtected: () => false, passwords: { mode: 'create-only' } });
    expect(() => verifyRoundTrip(header, pieces(), exported.desired, planAgainstOther, null)).toThrow(expect.objectContaining({ code: 'export_not_round_trip' }));
  });
});

describe('the export waits for a full stream to drain', () => {
  it('writes the next chunk only after drain when a write says the stream is full', async () => {
    const stream = Object.assign(new EventEmitter(), {
      written: [] as string[],
      write(chunk: string) {
        this.written.push(chunk);
        return this.written.length % 2 === 1; // every second write fills it
      },
    });
    const done = writeWithBackpressure(stream, ['a', 'b', 'c', 'd']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.written).toEqual(['a', 'b']);
    stream.emit('drain');
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.written).toEqual(['a', 'b', 'c', 'd']);
    stream.emit('drain');
    await done;
  });
});
