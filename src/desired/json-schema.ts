import * as z from 'zod';
import { desiredFileSchema } from './desired-schema.js';

/**
 * The JSON Schema of the desired-state file (draft-07, which editors' YAML plugins support
 * best), as the exact text committed in config/access.schema.json. Describes the input:
 * keys with defaults are optional.
 */
export function renderAccessSchema(): string {
  const schema = z.toJSONSchema(desiredFileSchema(), { io: 'input', target: 'draft-7' });
  const document = {
    $schema: schema.$schema,
    $comment: 'Generated from src/desired/desired-schema.ts by `npm run schema`; do not edit.',
    ...schema,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
