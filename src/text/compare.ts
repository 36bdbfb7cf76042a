/** Code-unit order, not locale order: the same on every machine, so plans are deterministic. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
