import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { z } from 'zod';
import { agentConfigSchema } from '../../src/workspaces/agent-config.ts';
import { contactPlanSchema } from '../../src/workspaces/contact-plan-config.ts';
import {
  calcomSettingsSchema,
  llmSettingsSchema,
  vapiHmacSettingsSchema,
  vapiSettingsSchema,
  whatsappSettingsSchema,
  workspaceConfigSchema,
} from '../../src/workspaces/workspace-config.ts';

// docs/WORKSPACE-CONFIG.md against the zod schemas that check the file (`agent.timeZone` was once
// required but not marked so). Every table headed "`<section>` field" must list exactly the
// section's fields, each with `yes` in its required column when a file without it is refused.

type Fields = Map<string, boolean>; // field path → required

// zod 4's definition objects, read only as far as this walk needs.
type Def = {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
};
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The object schema under optional/default/pipe wrappers, if it is one. */
function objectShape(s: z.ZodType): Record<string, z.ZodType> | null {
  const d = defOf(s);
  if (d.type === 'object') return d.shape!;
  if (d.type === 'optional' || d.type === 'default') return objectShape(d.innerType!);
  if (d.type === 'pipe') return objectShape(d.in!);
  return null;
}

function arrayElement(s: z.ZodType): z.ZodType | null {
  const d = defOf(s);
  if (d.type === 'array') return d.element!;
  if (d.type === 'optional' || d.type === 'default') return arrayElement(d.innerType!);
  return null;
}

/**
 * The fields of an object schema. Nested objects and arrays of objects are inlined with a dotted
 * prefix (`persona.tone`, `questions[].id`), unless `ownTable` lists them (they get a table of
 * their own and appear here as one field).
 */
function fieldsOf(schema: z.ZodType, prefix = '', ownTable: string[] = []): Fields {
  const out: Fields = new Map();
  for (const [key, field] of Object.entries(objectShape(schema)!)) {
    const path = `${prefix}${key}`;
    const required = !field.safeParse(undefined).success;
    const nested = objectShape(field);
    const element = arrayElement(field);
    if (nested && !ownTable.includes(path)) {
      for (const [k, v] of fieldsOf(field, `${path}.`)) out.set(k, v);
      continue;
    }
    out.set(path, required);
    if (element && objectShape(element)) for (const [k, v] of fieldsOf(element, `${path}[].`)) out.set(k, v);
  }
  return out;
}

interface DocTable {
  header: string[];
  rows: string[][];
}

/** Markdown tables whose first header cell is "`<name>` field", by name. */
function docTables(markdown: string): Map<string, DocTable> {
  const tables = new Map<string, DocTable>();
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^\| `([A-Za-z.]+)` field \|/.exec(lines[i]!) ?? /^\| (top-level) field \|/.exec(lines[i]!);
    if (!m) continue;
    const cells = (line: string) =>
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
    const rows: string[][] = [];
    for (let j = i + 2; j < lines.length && lines[j]!.startsWith('|'); j++) rows.push(cells(lines[j]!));
    tables.set(m[1]!, { header: cells(lines[i]!), rows });
  }
  return tables;
}

/** The documented fields of a table: each backticked name of the first cell, with its required mark. */
function documented(table: DocTable, filter?: (row: string[]) => boolean): Fields {
  const col = table.header.indexOf('required');
  assert.ok(col > 0, `a required column in ${table.header.join(' | ')}`);
  const out: Fields = new Map();
  for (const row of table.rows) {
    if (filter && !filter(row)) continue;
    const mark = row[col]!;
    assert.match(mark, /^(yes|no)\b/, `required column of ${row[0]} says yes or no`);
    for (const [, name] of row[0]!.matchAll(/`([^`]+)`/g)) out.set(name!, mark.startsWith('yes'));
  }
  return out;
}

const sorted = (f: Fields) => [...f].sort(([a], [b]) => a.localeCompare(b));

export function compareDocWithSchema(markdown: string): void {
  const tables = docTables(markdown);
  const table = (name: string) => {
    const t = tables.get(name);
    assert.ok(t, `docs/WORKSPACE-CONFIG.md has a table headed "\`${name}\` field"`);
    return t;
  };
  assert.deepEqual(
    sorted(documented(table('top-level'))),
    sorted(fieldsOf(workspaceConfigSchema, '', Object.keys(objectShape(workspaceConfigSchema)!))),
    'top-level',
  );
  assert.deepEqual(sorted(documented(table('voice'))), sorted(fieldsOf(vapiSettingsSchema, '', ['hmac'])), 'voice');
  assert.deepEqual(sorted(documented(table('voice.hmac'))), sorted(fieldsOf(vapiHmacSettingsSchema)), 'voice.hmac');
  assert.deepEqual(sorted(documented(table('llm'))), sorted(fieldsOf(llmSettingsSchema)), 'llm');
  assert.deepEqual(sorted(documented(table('scheduling'))), sorted(fieldsOf(calcomSettingsSchema)), 'scheduling');
  assert.deepEqual(
    sorted(documented(table('agent'))),
    sorted(fieldsOf(agentConfigSchema, '', ['contactPlan'])),
    'agent',
  );
  assert.deepEqual(
    sorted(documented(table('agent.contactPlan'))),
    sorted(fieldsOf(contactPlanSchema)),
    'agent.contactPlan',
  );
  // WhatsApp: one table, a provider column (`twilio`, `meta` or `both`), one schema per provider.
  const whatsapp = table('whatsapp');
  const providerCol = whatsapp.header.indexOf('provider');
  for (const option of defOf(whatsappSettingsSchema).options!) {
    const provider = String((defOf(objectShape(option)!.provider!) as Def & { values: unknown[] }).values[0]);
    const docs = documented(whatsapp, (row) => row[providerCol] === provider || row[providerCol] === 'both');
    assert.deepEqual(sorted(docs), sorted(fieldsOf(option)), `whatsapp (${provider})`);
  }
}

describe('docs/WORKSPACE-CONFIG.md', () => {
  const markdown = fs.readFileSync(new URL('../../docs/WORKSPACE-CONFIG.md', import.meta.url), 'utf8');

  it('documents every field of the config schema, required exactly where the schema requires it', () => {
    compareDocWithSchema(markdown);
  });

  it('the comparison fails for an unmarked required field and for an undocumented one', () => {
    const unmarked = markdown.replace(/^\| `timeZone` \| yes \|/m, '| `timeZone` | no |');
    assert.notEqual(unmarked, markdown);
    assert.throws(() => compareDocWithSchema(unmarked), /agent/);
    const missing = markdown.replace(/^\| `appendTools` \|.*\n/m, '');
    assert.notEqual(missing, markdown);
    assert.throws(() => compareDocWithSchema(missing), /voice/);
  });
});
