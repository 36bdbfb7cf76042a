/** `2h`, `30m`, `90s`, `1d`, or several in a row (`1h30m`): the durations of sync windows. */
const durationPattern = /^(?:\d+[dhms])+$/;
const unitMs: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** Milliseconds of a duration such as `2h` or `1h30m`; undefined when the text is not one (or is zero). */
export function durationMs(text: string): number | undefined {
  if (!durationPattern.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)([dhms])/g)) total += Number(amount) * unitMs[unit!]!;
  return total > 0 ? total : undefined;
}
