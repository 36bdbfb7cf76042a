import * as z from 'zod';
import { settingsFileSchema } from './settings-schema.js';

/** JSON Schema of a settings file, committed as config/settings.schema.json. */
export function renderSettingsSchema(): string {
  const schema = z.toJSONSchema(settingsFileSchema(), { io: 'input', target: 'draft-7' });
  return `${JSON.stringify({ $schema: schema.$schema, $comment: 'Generated from src/settings/settings-schema.ts by `npm run schema`; do not edit.', ...schema }, null, 2)}\n`;
}
