import { randomInt } from 'node:crypto';
import type { GeneratedPassword, PasswordClass } from '../model/index.js';
import { Secret } from './secret.js';

/**
 * The characters of each class. The service documents no password rules (api-spec: "Length
 * and complexity rules: not shown"), so symbols are printable ASCII punctuation without the
 * ones that break a value when it is pasted into a shell, YAML, JSON or a URL by hand: no
 * quotes, backslash, backtick, space, `#`, `%`, `&` or `$`.
 */
export const passwordAlphabets: Readonly<Record<PasswordClass, string>> = {
  lower: 'abcdefghijklmnopqrstuvwxyz',
  upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digit: '0123456789',
  symbol: '!()*+,-./:;<=>?@[]^_{|}~',
};

/**
 * A cryptographically random password of `recipe.length` characters holding at least one of
 * each class: one drawn from each class, the rest from all of them, then shuffled
 * (Fisher–Yates). Every draw is `crypto.randomInt`, which rejects out-of-range samples: no
 * modulo bias. Returned as a Secret, which registers it as a known secret at once, so it is
 * scrubbed from every output from the moment it exists.
 */
export function generatePassword(recipe: Pick<GeneratedPassword, 'length' | 'classes'>): Secret {
  const classes = [...new Set(recipe.classes)];
  if (classes.length === 0) throw new Error('a generated password needs at least one character class');
  if (recipe.length < classes.length) throw new Error(`a generated password of ${recipe.length} characters cannot hold one of each of ${classes.length} classes`);
  const all = classes.map((c) => passwordAlphabets[c]).join('');
  const chars: string[] = classes.map((c) => pick(passwordAlphabets[c]));
  while (chars.length < recipe.length) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i -= 1) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return new Secret(chars.join(''));
}

function pick(alphabet: string): string {
  return alphabet[randomInt(alphabet.length)]!;
}
