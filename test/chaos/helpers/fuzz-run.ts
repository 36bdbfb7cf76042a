import { startEmulator } from '../../../src/emulator/index.js';
import { createRng } from '../../../src/emulator/rng.js';
import { FUZZ_TOKENS, fuzzFaults, fuzzRequest, sendRaw, specStatuses } from './fuzz.js';

export interface FuzzOutcome {
  readonly requests: number;
  readonly answered: number;
  /** Requests whose connection a reset fault cut, as it should. */
  readonly resets: number;
  readonly statuses: Record<number, number>;
  readonly problems: string[];
}

/**
 * `count` seeded random requests in rounds of `roundSize`, 8 at a time; every round draws new
 * fault settings. The emulator must never fail inside (onError), never answer a status off the
 * spec's table, never leave a request unanswered unless a reset fault cut it, and still answer
 * a plain listing at the end.
 */
export async function fuzzEmulator(seed: number, count: number, roundSize = 100): Promise<FuzzOutcome> {
  const problems: string[] = [];
  const emu = await startEmulator({
    tokens: [FUZZ_TOKENS.readWrite],
    readOnlyTokens: [FUZZ_TOKENS.readOnly],
    expiredTokens: [FUZZ_TOKENS.expired],
    seed,
    onError: (error) => problems.push(`the emulator failed inside: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  const rng = createRng(seed);
  const statuses: Record<number, number> = {};
  let answered = 0;
  let resets = 0;
  try {
    for (let start = 0; start < count; start += roundSize) {
      emu.reset();
      emu.seed({ sshUsers: [{ username: 'u1', password: 'p' }, { username: 'u2' }], apikeys: [{ name: 'k1', roles: [1] }, { name: 'k2' }, { name: 'k3' }], count: { sshUsers: 5 } });
      emu.setTokens({ tokens: [FUZZ_TOKENS.readWrite], readOnlyTokens: [FUZZ_TOKENS.readOnly], expiredTokens: [FUZZ_TOKENS.expired] });
      const faults = start === 0 ? { failRate: 0, maintenance: false, rules: [], rateLimit: null } : fuzzFaults(rng);
      emu.setFaults(faults);
      const mayReset = faults.rules.some((r) => r.reset === true || r.commitThenFail === 'reset');
      const round = Array.from({ length: Math.min(roundSize, count - start) }, () => fuzzRequest(rng));
      for (let i = 0; i < round.length; i += 8) {
        const batch = round.slice(i, i + 8);
        const answers = await Promise.all(batch.map((r) => sendRaw(emu.port, r)));
        for (const [j, a] of answers.entries()) {
          for (const s of a.statuses) statuses[s] = (statuses[s] ?? 0) + 1;
          const off = a.statuses.filter((s) => !specStatuses.has(s));
          if (off.length > 0) problems.push(`answered ${off.join(', ')} (not in the spec's table) to ${batch[j]!.summary}`);
          if (a.noAnswer && !mayReset) problems.push(`no answer to ${batch[j]!.summary}`);
          if (a.noAnswer && mayReset) resets += 1;
          if (!a.noAnswer) answered += 1;
        }
      }
    }
    emu.setFaults({ failRate: 0, maintenance: false, rules: [], rateLimit: null });
    emu.setTokens({ tokens: [FUZZ_TOKENS.readWrite] });
    const alive = await fetch(`${emu.url}/api/sshusers?cursor=0`, { headers: { authorization: `Bearer ${FUZZ_TOKENS.readWrite}` } });
    if (alive.status !== 200) problems.push(`after the fuzz a plain listing answered ${alive.status}`);
  } finally {
    await emu.close();
  }
  return { requests: count, answered, resets, statuses, problems };
}
