import { configSchema } from '../../src/config/config.ts';

/**
 * The variables the config schema reads: the keys of the zod object under its transforms,
 * whatever wraps it (a pipe, a preprocess). The deployment files are checked against them.
 */
export function configKeys(schema: unknown = configSchema): string[] {
  let s = schema as { shape?: object; in?: unknown; _zod?: { def?: { in?: unknown; innerType?: unknown } } };
  for (let depth = 0; s && !s.shape && depth < 10; depth++) {
    s = (s.in ?? s._zod?.def?.in ?? s._zod?.def?.innerType) as typeof s;
  }
  if (!s?.shape) throw new Error('no object schema inside the config schema');
  return Object.keys(s.shape);
}
