import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { errText } from '../../../src/cli/output.js';
import type { ChangeResult } from '../../../src/model/index.js';
import { createLogger, safePrettyLine } from '../../../src/obs/logger.js';
import { plan } from '../../../src/plan/index.js';
import { renderJson, renderMarkdown, renderText } from '../../../src/report/index.js';
import { renderStaleMarkdown, staleMessage } from '../../../src/saved-plan/index.js';
import { escapeControls } from '../../../src/text/safe-text.js';
import { actual, desired, key, policyFor, user } from '../../helpers/plan-fixtures.js';

/**
 * What a hostile service can put in a name or an error: terminal escapes (ESC, BEL, CSI as
 * one C1 character), line tricks (CR, BS, U+2028), and every bidirectional control.
 */
const hostile = ['\u001b[2J', '\u0007', '\r', '\b', '\u007f', '\u0085', '\u009b31m', '\u061c', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
const evilName = `gnp${hostile.join('')}.exe`;
const evilMessage = `the service says${hostile.join('')} done`;

/** Every character of `text` that changes how it displays, but the layout's own line breaks. */
function unsafe(text: string): string[] {
  // eslint-disable-next-line no-control-regex -- finding them is the point
  return [...text].filter((ch) => ch !== '\n' && /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(ch));
}

const d = desired({ sshUsers: [user(evilName, { ensure: 'absent' })], apikeys: [key(evilName)] });
const remote = actual([{ id: 1, username: evilName, level: 'n1' }], [{ id: 2, name: evilName, superuser: false, roles: [4] }, { id: 3, name: `${evilName}-unmanaged`, superuser: false, roles: [] }]);
const p = { ...plan(d, remote, policyFor(d)), notes: [evilMessage] };
const results: ChangeResult[] = [
  { kind: 'sshUser', key: evilName, action: 'delete', status: 'failed', error: evilMessage },
  { kind: 'apikey', key: evilName, action: 'update', status: 'applied', drift: evilMessage },
];
const report = { plan: p, dryRun: false, results, file: `access${hostile.join('')}.yaml` };

describe('control and bidi characters from the service are escaped in every output', () => {
  it('the one escaping function writes each as a visible \\uXXXX', () => {
    expect(escapeControls('a\u202eb\u001bc\u0085d')).toBe('a\\u202eb\\u001bc\\u0085d');
    expect(escapeControls('line\nnext\r', { keepNewlines: true })).toBe('line\nnext\\u000d');
  });

  it('text output (names, messages, notes)', () => {
    const out = renderText(report, { color: false });
    expect(unsafe(out)).toEqual([]);
    expect(out).toContain('\\u202e');
    expect(out).toContain('the service says\\u001b[2J\\u0007');
  });

  it('Markdown output, as it goes to GITHUB_STEP_SUMMARY', () => {
    const out = renderMarkdown(report);
    expect(unsafe(out)).toEqual([]);
    expect(out).toContain('\\u202e');
    const stale = renderStaleMarkdown('plan.json', { reason: 'service', changes: [{ kind: 'apikey', change: 'created', key: evilName, id: 9, fields: {} }] });
    expect(unsafe(stale)).toEqual([]);
  });

  it('JSON output: the same document, with the characters as \\u escapes', () => {
    const out = renderJson(report);
    expect(unsafe(out)).toEqual([]);
    const doc = JSON.parse(out) as { results: { key: string; error?: string }[] };
    expect(doc.results[0]!.key).toBe(evilName);
    expect(doc.results[0]!.error).toBe(evilMessage);
  });

  it('error messages on stderr keep their line breaks and lose the rest', () => {
    const message = staleMessage('plan.json', { reason: 'service', changes: [{ kind: 'sshUser', change: 'deleted', key: evilName, id: 1, fields: {} }] });
    const out = errText(`error: ${message}\n`);
    expect(unsafe(out)).toEqual([]);
    expect(out.split('\n').length).toBe(message.split('\n').length + 1);
  });

  it('log lines, as JSON and as pino-pretty prints them', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger({ level: 'info', destination });
    log.warn({ kind: 'apikey', key: evilName }, evilMessage);
    const line = lines.join('');
    expect(unsafe(line.trimEnd())).toEqual([]);
    const parsed = JSON.parse(line) as { key: string; msg: string };
    expect(parsed.key).toBe(evilName);
    expect(parsed.msg).toBe(evilMessage);
    // pino-pretty parses the line and prints its strings raw: the escapes are escaped once more.
    const pretty = JSON.parse(safePrettyLine(line)) as { key: string; msg: string };
    expect(unsafe(pretty.key)).toEqual([]);
    expect(unsafe(pretty.msg)).toEqual([]);
    expect(pretty.msg).toContain('\\u202e');
    // A backslash that was text stays text.
    expect(JSON.parse(safePrettyLine(JSON.stringify({ msg: 'C:\\u001b-not-an-escape' }))).msg).toBe('C:\\u001b-not-an-escape');
  });
});
