/**
 * Safe path: protect globs (and, through name-pattern.ts, policy `usernamePattern`s) matched
 * by a linear-time automaton (linear-regex.ts) built from picomatch's own regex, beside
 * picomatch, which would match with V8's backtracking engine. It exists for safety, not
 * speed (f1a9bae): remote names are chosen by whoever can create an item, and one name can
 * stall a run on a glob whose regex backtracks. Measured at b0f91d5 (test/bench/fast-paths.ts
 * glob, 2 shared cores, CPU of one call; docs/performance.md, "Fast paths"):
 *
 * - `*-*-*-*-*-*-prod` against n dashes: picomatch 2.5 ms at n = 40, 35 ms at 60, 224 ms at
 *   80 (about n⁶; minutes at 200); this engine 0.017 ms at 80, 0.042 ms at 200, 2.1 ms at
 *   10,000. `!(*-*-*-prod)` against 3,000 dashes: picomatch 2.6 s, this engine 0.56 ms.
 * - `usernamePattern: (a+)+b` against n a's: V8 71 ms at n = 24 (×4 for every 2 more);
 *   this engine 0.003 ms.
 * - What it costs on benign names: 100,000 names × 10 protect globs 336 ms (334–338) against
 *   picomatch's 29 ms (28–31), ~0.3 µs per name and glob more; compiling 10 globs 0.5 ms
 *   against 0.15 ms. The planner asks only for remote items no declared item claims and for
 *   changes, so a no-op run asks almost never; a prune of 100k undeclared items pays ~0.3 s.
 *
 * It stays: no bound on a name's length can make a backtracking regex safe (`(a+)+b` takes
 * 71 ms at 24 characters), and picomatch has no linear mode. Held to picomatch and to V8 on
 * generated globs, patterns and names, and on a table of hostile ones:
 * test/unit/glob/glob-differential.test.ts and protect-globs.test.ts.
 */
import { createRequire } from 'node:module';
import type Picomatch from 'picomatch';
import { LinearRegex } from './linear-regex.js';
import { UnsupportedRegexError } from './regex-syntax.js';

/**
 * How protect globs are read: picomatch's syntax with `bash` (names are not paths, so `*` also
 * matches `/`) and `dot` (globs match leading dots).
 */
export const globOptions = { bash: true, dot: true } as const;

// picomatch is loaded when a glob is first compiled: most files have none, and a cold
// `amsync validate` of such a file does not pay for reading and compiling it.
let picomatchModule: typeof Picomatch | undefined;
function picomatch(): typeof Picomatch {
  picomatchModule ??= createRequire(import.meta.url)('picomatch') as typeof Picomatch;
  return picomatchModule;
}

/** A predicate over names, and the work its last call did (tests check it stays linear). */
export interface GlobMatcher {
  (name: string): boolean;
  /** States of the automaton: a call costs at most about states × (name length + 1) steps. */
  readonly size: number;
  readonly lastSteps: () => number;
}

/** A glob picomatch cannot use or amsync cannot match in linear time. */
export class GlobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GlobError';
  }
}

/**
 * Compiles a glob exactly as picomatch reads it, but matched without backtracking: remote
 * names are under other people's control, and picomatch's regex backtracks (a protect glob
 * `*-*-*-*-*-*-prod` against a name of 200 dashes blocked the event loop for minutes). The
 * result is picomatch's, as `picomatch.test` decides it: an empty name never matches, a name
 * equal to the glob always does, otherwise the regex says. Throws GlobError.
 */
export function compileGlob(glob: string): GlobMatcher {
  let regex: RegExp;
  try {
    regex = picomatch().makeRe(glob, globOptions);
  } catch (error) {
    throw new GlobError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  // picomatch compiles what it cannot parse (an unclosed brace, a reversed range) to a regex
  // that never matches.
  if (regex.source === '$^') throw new GlobError('it can never match (check its braces, brackets and ranges)');
  let linear: LinearRegex;
  try {
    linear = new LinearRegex(regex.source, regex.flags);
  } catch (error) {
    if (error instanceof UnsupportedRegexError) throw new GlobError(`it uses ${error.message}, which amsync cannot match in linear time`, { cause: error });
    throw error;
  }
  let steps = 0;
  const matcher = (name: string): boolean => {
    steps = 0;
    if (name === '') return false;
    if (name === glob) return true;
    const result = linear.test(name);
    steps = linear.lastSteps;
    return result;
  };
  return Object.assign(matcher, { size: linear.size, lastSteps: () => steps });
}

/** Why a glob cannot be used, or undefined when it can. */
export function globProblem(glob: string): string | undefined {
  try {
    compileGlob(glob);
    return undefined;
  } catch (error) {
    if (error instanceof GlobError) return error.message;
    throw error;
  }
}

/** A predicate true when any of the globs matches; false for none. */
export function anyGlob(globs: readonly string[]): (name: string) => boolean {
  const matchers = globs.map(compileGlob);
  if (matchers.length === 0) return () => false;
  return (name) => matchers.some((m) => m(name));
}
