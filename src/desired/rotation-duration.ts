/**
 * A DURATION as the desired-state file writes it: a positive whole number and a unit, `30s`, `15m`,
 * `72h`, `90d`. In milliseconds; undefined when the text is not one.
 */
export function durationMs(text: string): number | undefined {
  const match = durationPattern.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * unitMs[match[2] as keyof typeof unitMs];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}

export const durationPattern = /^([0-9]{1,9})(s|m|h|d)$/;

const unitMs = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
