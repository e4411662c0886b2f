import { z } from 'zod';
import { fieldMappingSchema, type FieldMapping } from './field-mapping.ts';

// What a generic webhook or a Google lead form source keeps in lead_sources.config: its field
// mapping and whether every lead it delivers is a sandbox lead (a source set up to try things
// out). Meta's sources keep their own settings (src/intake/meta/).

export const sourceConfigSchema = z.object({
  mapping: fieldMappingSchema.default({}),
  /** Every lead of this source goes to the sandbox (docs/SANDBOX.md), whatever its payload says. */
  sandbox: z.boolean().default(false),
});

export type SourceConfig = z.output<typeof sourceConfigSchema>;

/** The stored config, read leniently: a config this version cannot read maps with the defaults. */
export function sourceConfigOf(stored: Record<string, unknown>): SourceConfig {
  const parsed = sourceConfigSchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  const sandbox = stored.sandbox === true;
  return { mapping: {} as FieldMapping, sandbox };
}
