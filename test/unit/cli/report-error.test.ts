import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { reportError, wantsJson, type ErrorOutput } from '../../../src/cli/report-error.js';
import { AmsyncError, InvalidInputError, UsageError } from '../../../src/errors.js';

function output(overrides: Partial<ErrorOutput> = {}): ErrorOutput & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) }, json: false, stdoutUsed: false, out, err, ...overrides };
}

describe('a failure is printed once', () => {
  it('a finding that only repeats the headline is not printed again', () => {
    const o = output();
    const error = new InvalidInputError('cannot read access.yaml: no such file', [
      { severity: 'error', code: 'file_unreadable', path: '', message: 'cannot read access.yaml: no such file' },
    ]);
    expect(reportError(error, o)).toBe(65);
    expect(o.err.join('')).toBe('error: cannot read access.yaml: no such file\n');
  });

  it('findings with a position are printed under the headline', () => {
    const o = output();
    const error = new InvalidInputError('access.yaml is not a valid desired-state file (1 error); nothing was sent', [
      { severity: 'error', code: 'unknown_key', path: 'sshUsers[0].levl', message: "unknown key 'levl'", position: { file: 'access.yaml', line: 3, col: 7 } },
    ]);
    reportError(error, o);
    expect(o.err).toEqual(['error: access.yaml is not a valid desired-state file (1 error); nothing was sent\n', "access.yaml:3:7: error: unknown key 'levl' (sshUsers[0].levl)\n"]);
  });
});

describe('--json: one document on stdout', () => {
  it('the error document, when the command printed nothing there', () => {
    const o = output({ json: true });
    expect(reportError(new UsageError('no service URL', 'no_url'), o)).toBe(64);
    expect(JSON.parse(o.out.join(''))).toEqual({ error: { code: 'no_url', message: 'no service URL' } });
    expect(o.err).toEqual(['error: no service URL\n']);
  });

  it('nothing more, when the command already printed its document', () => {
    const o = output({ json: true, stdoutUsed: true });
    reportError(new AmsyncError('changes_failed', '1 of 2 changes did not apply'), o);
    expect(o.out).toEqual([]);
  });

  it('a commander error: the document only (commander printed the line)', () => {
    const o = output({ json: true });
    expect(reportError(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--nope'"), o)).toBe(64);
    expect(JSON.parse(o.out.join(''))).toEqual({ error: { code: 'usage', message: "unknown option '--nope'" } });
    expect(o.err).toEqual([]);
  });

  it('help and version are not failures', () => {
    const o = output({ json: true });
    expect(reportError(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'), o)).toBe(0);
    expect(o.out).toEqual([]);
  });

  it.each([
    [['plan', '--json'], true],
    [['sync', '--format', 'json'], true],
    [['sync', '--format=json'], true],
    [['plan', '--format', 'markdown'], false],
    [['plan', '--', '--json'], false],
    [['plan'], false],
  ])('%j asks for JSON: %s', (argv, expected) => {
    expect(wantsJson(argv)).toBe(expected);
  });
});
