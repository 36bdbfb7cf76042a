import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/model/index.js';
import { parseDesired } from '../../../src/desired/parse-desired.js';

const canary = 'Canary7f3a9cPw';

/** Every finding, as text, for files that hold the canary where a password goes. */
function findings(text: string, env: Record<string, string> = {}): string {
  const result = parseDesired(text, {
    file: 'access.yaml',
    env,
    readSecretFile: () => `${canary}\n`,
  });
  return [...result.errors, ...result.warnings].map((d) => `${formatDiagnostic(d)} ${JSON.stringify(d)}`).join('\n') + JSON.stringify(result.value ?? null);
}

describe('an error about a password never contains its value', () => {
  const cases: [string, string][] = [
    ['a literal password (warned)', `sshUsers:\n  - username: a\n    password: ${canary}\n`],
    ['a literal on an apikey (refused)', `apikeys:\n  - name: a\n    password: ${canary}\n`],
    ['a literal under a misspelt key', `sshUsers:\n  - username: a\n    passwrd: ${canary}\n`],
    ['a numeric password', 'sshUsers:\n  - username: a\n    password: 7123456789\n'],
    ['a password mapping with an unknown key', `sshUsers:\n  - username: a\n    password: { value: ${canary} }\n`],
    ['a password on an absent user', `sshUsers:\n  - username: a\n    ensure: absent\n    password: ${canary}\n`],
    ['a password given twice', `sshUsers:\n  - username: a\n    password: ${canary}\n    password: ${canary}x\n`],
    ['a file reference that resolves', 'sshUsers:\n  - username: a\n    password: { file: pw }\n'],
    ['an env reference that resolves, beside an error', `sshUsers:\n  - username: a\n    password: { env: PW }\n    levl: x\n`],
  ];

  it.each(cases)('%s', (_name, text) => {
    const out = findings(text, { PW: canary });
    expect(out).not.toContain(canary);
    expect(out).not.toContain('7123456789');
  });
});
