import type { z } from 'zod';
import { AppError } from '../shared/errors.ts';

/**
 * A request's params, query or body through its zod schema; a mismatch is the one validation
 * error (400 `Validation failed.` with each issue). Fastify's own schema compilers are off
 * (app.ts): every route validates here, so every error has our shape.
 */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new AppError('validation_failed', {
    issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
  });
}
