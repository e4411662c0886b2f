import type { z } from 'zod';
import { AppError } from '../shared/errors.ts';

/** An admin request's body, query or params through its zod schema; a mismatch is the one validation error. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new AppError('validation_failed', { issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) });
}
