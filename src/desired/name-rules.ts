/**
 * The rules of a written name that both the zod schema (desired-schema.ts) and the quick check
 * (quick-check.ts) apply; here, without zod, so the quick check loads none.
 */

/** A name is its own identity: spaces around it would make two names look alike. */
export const noOuterSpaces = (s: string): boolean => s.trim() === s;
