import { describe, expect, it } from 'vitest';
import { parseDesired, type SelectableTarget } from '../../../src/desired/index.js';
import { desiredForTarget, parseSelectorFlag, selectTargets } from '../../../src/fleet/index.js';
import { UsageError } from '../../../src/errors.js';

/** `targets:` in the desired file, and --target / --selector on the command line (DESIGN.md §9). */

const fleet: SelectableTarget[] = [
  { name: 'sp-1', labels: { site: 'sp', env: 'prod' } },
  { name: 'sp-2', labels: { site: 'sp', env: 'dev' } },
  { name: 'rj-1', labels: { site: 'rj', env: 'prod' } },
];

const parse = (text: string, targets: readonly SelectableTarget[] | 'none' = fleet) =>
  parseDesired(text, { file: 'access.yaml', env: {}, readSecretFile: () => new Error('none'), ...(targets === 'none' ? {} : { targets }) });
const found = (text: string, targets?: readonly SelectableTarget[] | 'none') => {
  const r = parse(text, targets);
  return [...r.errors, ...r.warnings].map((d) => `${d.position?.line}:${d.position?.col} ${d.severity}: ${d.message}`);
};

describe('which items a target gets', () => {
  const text = `targets: { env: prod }
sshUsers:
  - username: everywhere-prod
  - username: dev-only
    targets: [sp-2]
  - username: all
    targets: {}
apikeys:
  - name: sp-key
    targets: { site: sp }
prune: { sshUsers: true }
`;
  const desired = parse(text).value!;
  const of = (name: string) => {
    const d = desiredForTarget(desired, fleet.find((t) => t.name === name)!);
    return [...d.sshUsers.map((u) => u.username), ...d.apikeys.map((k) => k.name)];
  };

  it('an item without targets: gets the file\'s default; its own selector wins; {} is every target', () => {
    expect(of('sp-1')).toEqual(['everywhere-prod', 'all', 'sp-key']);
    expect(of('sp-2')).toEqual(['dev-only', 'all', 'sp-key']);
    expect(of('rj-1')).toEqual(['everywhere-prod', 'all']);
  });

  it('the per-target state carries no selectors, and keeps prune and protect', () => {
    const d = desiredForTarget(desired, fleet[0]!);
    expect(d.targets).toBeUndefined();
    expect(d.sshUsers.every((u) => u.targets === undefined)).toBe(true);
    expect(d.prune).toEqual({ sshUsers: true, apikeys: false });
  });

  it('without a default, every target gets every item', () => {
    const plain = parse('sshUsers:\n  - username: a\n').value!;
    expect(fleet.map((t) => desiredForTarget(plain, t).sshUsers.length)).toEqual([1, 1, 1]);
  });
});

describe('targets: is checked against the targets file', () => {
  it('an unknown name is an error at the name, with a suggestion', () => {
    expect(found('sshUsers:\n  - username: a\n    targets: [sp-1, sp1]\n')).toEqual(["3:21 error: unknown target 'sp1' — did you mean 'sp-1'?"]);
  });

  it('a selector that selects nothing is a warning naming a label no target has', () => {
    expect(found('apikeys:\n  - name: k\n    targets: { sity: sp }\n')).toEqual([
      "3:14 warning: selector {sity: sp} selects none of the 3 targets (no target has the label 'sity' — did you mean 'site'?): this goes nowhere",
    ]);
    expect(found('targets: []\nsshUsers: []\n')).toEqual(['1:10 warning: `targets: []` selects no target: this goes nowhere']);
  });

  it('a malformed selector is a shape error', () => {
    expect(found('targets: sp-1\n')).toEqual(["1:10 error: expected a list of target names ([sp-1, sp-2]) or labels ({site: sp}), got the string 'sp-1'"]);
    expect(found('targets: [Sp_1]\n')).toEqual(['1:11 error: "Sp_1" is not a target name (lowercase letters, digits and -, at most 63, not starting with -)']);
  });

  it('without a targets file, any targets: is an error that says it needs --targets', () => {
    expect(found('targets: { env: prod }\nsshUsers:\n  - username: a\n    targets: [sp-1]\n', 'none')).toEqual([
      '1:1 error: `targets:` selects targets of a fleet: give a targets file with --targets FILE (or AMSYNC_TARGETS), or remove it',
      '4:5 error: `targets:` selects targets of a fleet: give a targets file with --targets FILE (or AMSYNC_TARGETS), or remove it',
    ]);
    expect(found('sshUsers:\n  - username: a\n', 'none')).toEqual([]);
  });
});

describe('--target and --selector', () => {
  it('narrow the run, in the file\'s order; selectors are ANDed', () => {
    expect(selectTargets(fleet, {}, 't.yaml').map((t) => t.name)).toEqual(['sp-1', 'sp-2', 'rj-1']);
    expect(selectTargets(fleet, { names: ['rj-1', 'sp-1'] }, 't.yaml').map((t) => t.name)).toEqual(['sp-1', 'rj-1']);
    expect(selectTargets(fleet, { labels: { env: 'prod' } }, 't.yaml').map((t) => t.name)).toEqual(['sp-1', 'rj-1']);
    expect(selectTargets(fleet, { labels: { env: 'prod', site: 'sp' } }, 't.yaml').map((t) => t.name)).toEqual(['sp-1']);
    expect(() => selectTargets(fleet, { names: ['sp-2'], labels: { env: 'prod' } }, 't.yaml')).toThrow(/--target sp-2 with --selector env=prod selects none/);
  });

  it('an unknown name, or nothing selected, is a usage error', () => {
    expect(() => selectTargets(fleet, { names: ['sp-3'] }, 't.yaml')).toThrow(UsageError);
    expect(() => selectTargets(fleet, { labels: { site: 'mars' } }, 't.yaml')).toThrow(/--selector site=mars selects none of the 3 targets of t\.yaml/);
  });

  it('--selector is KEY=VALUE', () => {
    expect(parseSelectorFlag('site=sp')).toEqual(['site', 'sp']);
    expect(parseSelectorFlag('example.com/tier=gold')).toEqual(['example.com/tier', 'gold']);
    for (const bad of ['site', '=sp', 'site=', 'site=a b']) expect(() => parseSelectorFlag(bad)).toThrow(UsageError);
  });
});
