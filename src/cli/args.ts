import { parseArgs } from 'node:util';

/** A user mistake: printed as one line, exit code 1. */
export class CliError extends Error {}

type Spec = Record<string, 'string' | 'boolean'>;

/**
 * Parses a command's options. `command` names it in messages (`serve`, `workspace create`);
 * `accepted` narrows `spec` to what this command takes (a group such as `workspace` shares one
 * spec). A mistake is one line that names the command and what it takes, never Node's parser text:
 * `Unknown option --prot for "serve". Options: --port, --host, --no-worker.`
 */
export function parseCommandArgs<S extends Spec>(
  args: string[],
  spec: S,
  command: string,
  accepted?: readonly (keyof S & string)[],
) {
  const names = accepted ?? (Object.keys(spec) as (keyof S & string)[]);
  const taken = Object.fromEntries(names.map((k) => [k, spec[k]!]));
  const options = Object.fromEntries(Object.entries(taken).map(([k, type]) => [k, { type }]));
  // A lenient pass first: it reports every token, so our message can name the offending one.
  const { tokens } = parseArgs({
    args,
    options: options as never,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const type = taken[t.name];
    if (!type) throw new CliError(`Unknown option ${t.rawName} for "${command}". ${optionList(names)}`);
    if (type === 'string' && t.value === undefined)
      throw new CliError(`Option ${t.rawName} of "${command}" needs a value.`);
    if (type === 'boolean' && t.inlineValue) throw new CliError(`Option ${t.rawName} of "${command}" takes no value.`);
  }
  try {
    const parsed = parseArgs({ args, options: options as never, allowPositionals: true, strict: true });
    return {
      values: parsed.values as { [K in keyof S]?: S[K] extends 'boolean' ? boolean : string },
      positionals: parsed.positionals,
    };
  } catch (err) {
    // Cases the lenient pass lets through (a value that looks like an option: `--port -1`).
    throw new CliError(`Invalid options for "${command}": ${(err as Error).message}`);
  }
}

function optionList(names: readonly string[]): string {
  return names.length === 0 ? 'It takes no options.' : `Options: ${names.map((n) => `--${n}`).join(', ')}.`;
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
