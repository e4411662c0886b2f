import type { z } from 'zod';
import { AppError, type ValidationIssue } from './errors.ts';

// The one mapping from a zod failure to the closed error vocabulary: a request, a provider's
// webhook and a settings draft that fail their schema all report `validation_failed` with the
// same issues, whichever layer parsed them.

/** A zod failure's issues in our shape, each path under `prefix` (where the value sits in what was sent). */
export function validationIssues(error: z.ZodError, prefix: readonly string[] = []): ValidationIssue[] {
  return error.issues.map((i) => ({ path: [...prefix, ...i.path.map(String)], message: i.message }));
}

/**
 * `value` through its zod schema; a mismatch is the one validation error (`validation_failed` with
 * each issue, its path under `prefix`), which src/http/error-handler.ts renders.
 */
export function parse<T extends z.ZodType>(schema: T, value: unknown, prefix: readonly string[] = []): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new AppError('validation_failed', { issues: validationIssues(r.error, prefix) });
}
