import { z } from 'zod';
import { parsePath, textAt, valueAt } from './json-path.ts';

// How a connected source's payload becomes a lead (docs/INTAKE.md): each lead field names a path
// into the payload (src/intake/json-path.ts). A field the operator leaves unmapped falls back to
// the kind's defaults, so a flat payload ({ "name", "phone", "email" }) needs no mapping at all;
// what no field claims of a flat payload's top level goes into the lead's metadata, so nothing a
// form asked is lost.

const fieldPath = z
  .string()
  .max(300)
  .refine(
    (p) => parsePath(p) !== null,
    'Not a field path (e.g. contact.phone, answers[0].text, fields[label=Phone].value).',
  );

export const fieldMappingSchema = z
  .object({
    /** One path, or several joined with a space (first and last name). */
    name: z.union([fieldPath, z.array(fieldPath).min(1).max(4)]).optional(),
    phone: fieldPath.optional(),
    email: fieldPath.optional(),
    goal: fieldPath.optional(),
    /** Metadata key → path; when given, only these go into metadata. */
    metadata: z
      .record(z.string().min(1).max(64), fieldPath)
      .refine((m) => Object.keys(m).length <= 30, 'At most 30 metadata fields.')
      .optional(),
    /** The source's own id of the lead: a retried delivery with the same id never makes a second lead. */
    sourceLeadId: fieldPath.optional(),
    /** A truthy value here makes the lead a sandbox lead (docs/SANDBOX.md). */
    test: fieldPath.optional(),
  })
  .strict();

export type FieldMapping = z.output<typeof fieldMappingSchema>;

/** A kind's fallbacks: each field's candidate paths, the first that has a value wins. */
export interface MappingDefaults {
  /** Each entry one way to build the name (one path, or several joined). */
  name: string[][];
  phone: string[];
  email: string[];
  goal: string[];
  sourceLeadId: string[];
  test: string[];
  /** Metadata keys of the leftover top-level fields: as they are, or lower-cased (Google's column ids). */
  metadataKeys: 'as-is' | 'lower';
}

/** A flat JSON object from a form tool or Zapier. */
export const FLAT_DEFAULTS: MappingDefaults = {
  name: [['name'], ['full_name'], ['fullName'], ['first_name', 'last_name'], ['firstName', 'lastName']],
  phone: ['phone', 'phone_number', 'phoneNumber', 'mobile', 'tel'],
  email: ['email', 'email_address', 'emailAddress'],
  goal: ['goal', 'message', 'notes'],
  sourceLeadId: ['id', 'lead_id', 'leadId', 'submission_id', 'submissionId'],
  test: ['test', 'is_test'],
  metadataKeys: 'as-is',
};

export interface MappedLead {
  /** The lead's fields as POST /api/public/leads takes them (without consent). */
  body: { name?: string; phone?: string; email?: string; goal?: string; metadata?: Record<string, unknown> };
  sourceLeadId: string | null;
  test: boolean;
}

const MAX_METADATA_KEYS = 30;

export function applyMapping(record: unknown, mapping: FieldMapping, defaults: MappingDefaults): MappedLead {
  const used = new Set<string>();
  const first = (paths: readonly string[]): string | undefined => {
    for (const p of paths) {
      const v = textAt(record, p);
      if (v !== undefined) return (used.add(p), v);
    }
    return undefined;
  };
  const joined = (ways: readonly (readonly string[])[]): string | undefined => {
    for (const way of ways) {
      const parts = way.map((p) => textAt(record, p)).filter((v): v is string => v !== undefined);
      if (parts.length > 0) return (way.forEach((p) => used.add(p)), parts.join(' '));
    }
    return undefined;
  };
  const name = mapping.name
    ? joined([typeof mapping.name === 'string' ? [mapping.name] : mapping.name])
    : joined(defaults.name);
  const phone = first(mapping.phone ? [mapping.phone] : defaults.phone);
  const email = first(mapping.email ? [mapping.email] : defaults.email);
  const goal = first(mapping.goal ? [mapping.goal] : defaults.goal);
  const sourceLeadId = first(mapping.sourceLeadId ? [mapping.sourceLeadId] : defaults.sourceLeadId) ?? null;
  const testPaths = mapping.test ? [mapping.test] : defaults.test;
  const test = testPaths.some((p) => isTruthy(valueAt(record, p)));
  testPaths.forEach((p) => used.add(p));
  const metadata = mapping.metadata ? mappedMetadata(record, mapping.metadata) : leftovers(record, used, defaults);
  return {
    body: {
      ...(name !== undefined ? { name } : {}),
      ...(phone !== undefined ? { phone } : {}),
      ...(email !== undefined ? { email } : {}),
      ...(goal !== undefined ? { goal } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
    sourceLeadId: sourceLeadId === null ? null : sourceLeadId.slice(0, 200),
    test,
  };
}

function mappedMetadata(record: unknown, paths: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, p] of Object.entries(paths)) {
    const v = textAt(record, p);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

// Only a flat payload's top-level scalars: a nested tool envelope would otherwise pour its
// internals (ids, timestamps, signatures) into what the agent reads.
function leftovers(record: unknown, used: Set<string>, defaults: MappingDefaults): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return out;
  for (const [key, v] of Object.entries(record)) {
    if (Object.keys(out).length >= MAX_METADATA_KEYS) break;
    if (used.has(key) || key.length > 64 || key === 'consent') continue;
    if (typeof v === 'string' ? v.trim() === '' : typeof v !== 'number' && typeof v !== 'boolean') continue;
    out[defaults.metadataKeys === 'lower' ? key.toLowerCase() : key] = v;
  }
  return out;
}

function isTruthy(v: unknown): boolean {
  return v === true || v === 1 || (typeof v === 'string' && ['true', '1', 'yes'].includes(v.trim().toLowerCase()));
}
