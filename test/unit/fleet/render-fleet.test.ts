import { describe, expect, it } from 'vitest';
import { notStartedTargetsLine, renderFleetMarkdown, renderTargetText, type TargetOutcome } from '../../../src/fleet/index.js';

const notStarted = (name: string): TargetOutcome => ({ name, url: `https://${name}.example`, status: 'skipped', error: { code: 'interrupted', message: 'not started: the run was interrupted' } });

describe('the targets an interrupt kept from starting: counted, not a section each', () => {
  it('renders no section for such a target, and one line for all of them', () => {
    const outcomes = [notStarted('a'), notStarted('b'), notStarted('c')];
    for (const o of outcomes) expect(renderTargetText(o, { command: 'sync', dryRun: false }, { color: false })).toBe('');
    expect(notStartedTargetsLine(outcomes)).toBe('· 3 targets not started: the run was interrupted\n\n');
    expect(notStartedTargetsLine([notStarted('a')])).toBe('· 1 target not started: the run was interrupted\n\n');
  });

  it('another skipped target keeps its section; none not started: no line', () => {
    const other: TargetOutcome = { name: 'x', url: 'https://x.example', status: 'skipped', error: { code: 'plan_not_applied', message: 'not applied: another target failed' } };
    expect(renderTargetText(other, { command: 'apply', dryRun: false }, { color: false })).toContain('skipped: not applied: another target failed');
    expect(notStartedTargetsLine([other])).toBe('');
  });
});

describe('a target the interrupt stopped mid-run', () => {
  const interrupted: TargetOutcome = {
    name: 'm',
    url: 'https://m.example',
    status: 'interrupted',
    plan: { changes: [], unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] },
    results: [],
    error: { code: 'interrupted', message: 'interrupted: 3 of 20 changes applied, 17 not started (never sent)' },
  };
  it('its section ends with what it came to, not as an error; it is not counted as not started', () => {
    const text = renderTargetText(interrupted, { command: 'sync', dryRun: false }, { color: false });
    expect(text).toContain('\ninterrupted: 3 of 20 changes applied, 17 not started (never sent)\n');
    expect(text).not.toContain('error:');
    expect(notStartedTargetsLine([interrupted])).toBe('');
  });
  it('markdown: its row says interrupted', () => {
    expect(renderFleetMarkdown([interrupted], { command: 'sync', dryRun: false })).toContain('| `m` | ⏸️ interrupted |');
  });
});
