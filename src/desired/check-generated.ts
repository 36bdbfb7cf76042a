import type { Diagnostic } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { formatPath, type YamlSource } from '../yaml/index.js';
import { asList, asRecord } from './check-desired.js';

/**
 * `rotate:` needs a password amsync generates: a password from the environment or a file is
 * rotated by whoever writes it there (and `--rotate-passwords` sends it again). Said with the
 * position of the `rotate:` key, on the raw document, like check-desired.ts's checks.
 */
export function checkGeneratedPasswords(raw: unknown, source: YamlSource): Diagnostic[] {
  const out: Diagnostic[] = [];
  asList(asRecord(raw)?.sshUsers).forEach((rawItem, i) => {
    const item = asRecord(rawItem);
    if (item?.rotate === undefined) return;
    if (asRecord(item.password)?.generate !== undefined) return;
    const path = ['sshUsers', i, 'rotate'];
    out.push({
      severity: 'error',
      code: diagnosticCodes.invalidValue,
      message: '`rotate:` needs a password amsync generates: write `password: {generate: {length: 32}}`, or remove `rotate:` (a password from env or a file is rotated where it is kept; --replace sends it again)',
      path: formatPath(path),
      position: source.locate(path, 'key'),
    });
  });
  return out;
}
