/** The character classes a generated password may draw from (`password: {generate: {classes}}`). */
export const passwordClasses = ['lower', 'upper', 'digit', 'symbol'] as const;
export type PasswordClass = (typeof passwordClasses)[number];

/**
 * `password: {generate: {length, classes}}` with `rotate: {every}` (README, "The desired-state file"
 * (turn 3)"): how a password amsync generates is made, and how often it is replaced.
 */
export interface GeneratedPassword {
  readonly length: number;
  /** Each class appears at least once; the others are drawn from all of them. */
  readonly classes: readonly PasswordClass[];
  /** `rotate: {every}` in milliseconds; absent: generated once, on create. */
  readonly rotateEveryMs?: number;
  /** `rotate: {every}` as written (`30d`), for plan reasons. */
  readonly rotateEvery?: string;
}
