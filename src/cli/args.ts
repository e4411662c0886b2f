import { parseArgs } from 'node:util';

/** A user mistake: printed as one line, exit code 1. */
export class CliError extends Error {}

type Spec = Record<string, 'string' | 'boolean'>;

export function parseCommandArgs<S extends Spec>(args: string[], spec: S) {
  const options = Object.fromEntries(Object.entries(spec).map(([k, type]) => [k, { type }]));
  try {
    const parsed = parseArgs({ args, options: options as never, allowPositionals: true, strict: true });
    return {
      values: parsed.values as { [K in keyof S]?: S[K] extends 'boolean' ? boolean : string },
      positionals: parsed.positionals,
    };
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

export function required(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new CliError(`Missing ${what}.`);
  return value;
}

export function positiveInt(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${what} must be a positive whole number.`);
  return n;
}
