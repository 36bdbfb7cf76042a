import { LinearRegex } from './linear-regex.js';
import { UnsupportedRegexError } from './regex-syntax.js';

/** A policy pattern (`usernamePattern`) the linear engine cannot match, or that is not a regular expression. */
export class PatternError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PatternError';
  }
}

/** Longest pattern accepted: a name rule, not a program. */
export const maxPatternLength = 1_000;

/**
 * A regular expression (JavaScript syntax, no flags) that a whole name must match, as if
 * written between `^(?:` and `)$`, matched in time linear in the name by the same engine as
 * protect globs: names come from files others write, and a pattern like `^(a+)+$` must not
 * turn a long name into minutes of backtracking. Never run by V8's engine: `new RegExp` only
 * checks the syntax. Throws PatternError for a pattern that is not valid or needs backtracking
 * (back-references).
 */
export function compileNamePattern(pattern: string): (name: string) => boolean {
  if (pattern.length > maxPatternLength) throw new PatternError(`it is longer than ${maxPatternLength} characters`);
  const whole = `^(?:${pattern})$`;
  try {
    // Compiling does not match anything: this only checks the syntax, as the parser below
    // expects. The pattern alone first: `a)|(b` is valid once wrapped, and would unanchor it.
    new RegExp(pattern);
    new RegExp(whole);
  } catch (error) {
    // V8 says "Invalid regular expression: /^(?:[a-)$/: Range out of order ...": keep the why.
    const why = error instanceof Error ? error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : String(error);
    throw new PatternError(`it is not a regular expression (${why})`, { cause: error });
  }
  let linear: LinearRegex;
  try {
    linear = new LinearRegex(whole);
  } catch (error) {
    if (error instanceof UnsupportedRegexError) throw new PatternError(`it uses ${error.message}, which amsync cannot match in linear time`, { cause: error });
    if (error instanceof SyntaxError) throw new PatternError(`it is not a regular expression amsync can read (${error.message})`, { cause: error });
    throw error;
  }
  return (name) => linear.test(name);
}

/** Why a pattern cannot be used, or undefined when it can. */
export function namePatternProblem(pattern: string): string | undefined {
  try {
    compileNamePattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}
