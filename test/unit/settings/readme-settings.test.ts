import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settingsEnvVars } from '../../../src/settings/index.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The README's `## Settings` section: the table users look variables up in. */
function settingsSection(): string {
  const start = readme.indexOf('\n## Settings\n');
  const end = readme.indexOf('\n## ', start + 1);
  expect(start).toBeGreaterThan(-1);
  return readme.slice(start, end === -1 ? undefined : end);
}

describe("the README's settings table names every variable amsync reads", () => {
  it.each(settingsEnvVars.map((v) => [v.name, v.path.join('.')] as const))('%s (%s) is in the table, on the row of its setting', (name, path) => {
    const row = settingsSection()
      .split('\n')
      .find((line) => line.includes(`\`${name}\``));
    expect(row, `${name} is missing from README's settings table`).toBeDefined();
    expect(row).toContain(`\`${path}\``);
  });
});
