/** Edit distance (insert, delete, substitute, and swap of neighbours), for "did you mean". */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i]!;
      const prev = d[i - 1]!;
      let best = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, if it is close enough to be a likely typo: a case
 * difference, or at most a third of the word's letters wrong (at least one, at most three).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > 64) return undefined;
  const lower = word.toLowerCase();
  const folded = fold(word);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    // Case and separators (ssh_users, SSH-Users) are the cheapest slips of all.
    const distance = fold(candidate) === folded ? 0.5 : editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

function fold(word: string): string {
  return word.toLowerCase().replace(/[-_\s]/g, '');
}

/** " — did you mean 'level'?" or "". */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : ` — did you mean '${match}'?`;
}
