import { writeFileSync } from 'node:fs';
import { renderSettingsSchema } from '../settings/index.js';
import { renderAccessSchema } from '../desired/index.js';
import { renderTargetsSchema } from '../fleet/index.js';

// `npm run schema`: regenerates the committed JSON Schemas. dist/cli/ and src/cli/ are both
// two levels below the package root.
const targets: [URL, () => string][] = [
  [new URL('../../config/access.schema.json', import.meta.url), renderAccessSchema],
  [new URL('../../config/settings.schema.json', import.meta.url), renderSettingsSchema],
  [new URL('../../config/targets.schema.json', import.meta.url), renderTargetsSchema],
];
for (const [target, render] of targets) {
  writeFileSync(target, render());
  process.stdout.write(`wrote ${target.pathname.split('/').slice(-2).join('/')}\n`);
}
