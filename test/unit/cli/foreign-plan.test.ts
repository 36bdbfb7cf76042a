import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../../helpers/in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'amsync-foreign-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('amsync apply FILE with a file that is not an amsync plan says so (65), never "format undefined"', () => {
  it.each([
    ['a Terraform plan (terraform show -json)', { format_version: '1.2', terraform_version: '1.9.0', planned_values: {}, resource_changes: [] }, 'is not an amsync plan file (it has no "kind": "amsync-plan"): it is a Terraform plan (`terraform show -json`)'],
    ['a Kubernetes object', { apiVersion: 'v1', kind: 'ConfigMap', data: {} }, 'is not an amsync plan file (it has no "kind": "amsync-plan"): its "kind" is "ConfigMap"'],
    ['our kind without a formatVersion', { kind: 'amsync-plan', plan: {} }, 'is not an amsync plan file: it has "kind": "amsync-plan" but no "formatVersion"'],
    ['our kind with a text formatVersion', { kind: 'amsync-plan', formatVersion: '1' }, 'is not an amsync plan file: it has "kind": "amsync-plan" but no "formatVersion"'],
    ['any JSON without a kind', { plan: [] }, 'is not an amsync plan file (it has no "kind": "amsync-plan"); make one with `amsync plan --out FILE`'],
  ])('%s', async (name, doc, says) => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(doc));
    const run = await runInProcess(['apply', file, '--url', 'http://127.0.0.1:1'], { env: { AMSYNC_TOKEN: 'unused' } });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${file} ${says}`);
    expect(run.stderr).not.toContain('undefined');
    expect(run.stdout).toBe('');
  });

  it('an amsync plan of another format still names its format', async () => {
    const file = join(dir, 'future.json');
    writeFileSync(file, JSON.stringify({ kind: 'amsync-plan', formatVersion: 99 }));
    const run = await runInProcess(['apply', file]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${file} is an amsync plan of format 99; this amsync reads format 1`);
  });
});
