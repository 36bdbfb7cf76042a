import * as z from 'zod';
import type { FieldError } from './types.js';

/** The body of `POST /_emulator/seed` and the argument of `seed()`. */
export const seedSchema = z.strictObject({
  sshUsers: z
    .array(z.strictObject({ username: z.string().min(1), level: z.string().min(1).optional(), password: z.string().min(1).optional() }))
    .optional(),
  apikeys: z
    .array(z.strictObject({ name: z.string().min(1), superuser: z.boolean().optional(), roles: z.array(z.number().int()).optional() }))
    .optional(),
  count: z
    .strictObject({
      sshUsers: z.number().int().min(0).max(1_000_000).optional(),
      apikeys: z.number().int().min(0).max(1_000_000).optional(),
    })
    .optional(),
  /** false: answer only the counts (seeding 100k items need not send them all back). */
  returnItems: z.boolean().optional(),
});

export const checkPasswordSchema = z.strictObject({ username: z.string(), password: z.string() });

/** zod issues as the service's error body entries. */
export function issuesToErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || 'body',
    type: issue.code === 'invalid_type' && issue.input === undefined ? 'required' : 'invalid',
    msg: issue.message,
  }));
}
