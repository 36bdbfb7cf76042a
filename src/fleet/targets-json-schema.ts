import * as z from 'zod';
import { targetsFileSchema } from './targets-schema.js';

/**
 * The JSON Schema of the targets file (draft-07, like the others), as the exact text committed
 * in config/targets.schema.json. Editors pick it up from a first line
 * `# yaml-language-server: $schema=../config/targets.schema.json`.
 */
export function renderTargetsSchema(): string {
  const schema = z.toJSONSchema(targetsFileSchema, { io: 'input', target: 'draft-7' });
  const document = {
    $schema: schema.$schema,
    $comment: 'Generated from src/fleet/targets-schema.ts by `npm run schema`; do not edit.',
    ...schema,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
