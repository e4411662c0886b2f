import { toolDeclarations } from '../../agent/tool-registry.ts';
import type { CallServer, CallTool } from '../voice-provider.ts';

// Our agent tools as Vapi function tools, appended to the assistant for each call
// (`assistantOverrides["tools:append"]`), each answered at the workspace's tools URL. Vapi's
// `JsonSchema` accepts only type, items, properties, description, pattern, format, required, enum
// and title (Vapi's OpenAPI document; its validator refuses anything else), so the zod-generated schemas are cut
// down to those, with limits and defaults moved into the description for the model to read.

type Schema = Record<string, unknown>;

const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

let functions: Array<CallTool['function']> | null = null;

export function vapiCallTools(server: CallServer): CallTool[] {
  // The declarations never change at run time; converting them once keeps dispatch cheap.
  functions ??= toolDeclarations().map((t) => ({
    name: t.function.name,
    description: t.function.description,
    parameters: toVapiSchema(t.function.parameters),
  }));
  return functions.map((f) => ({ type: 'function', function: f, server }));
}

/** One JSON Schema node in Vapi's subset. Exported for tests. */
export function toVapiSchema(s: Schema): Schema {
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter(
    (t): t is string => typeof t === 'string' && TYPES.has(t),
  );
  // A value that may be a string or a number (a `number` answer): the model sends either.
  const type = types.length === 1 ? types[0]! : types.includes('string') ? 'string' : (types[0] ?? 'string');
  const out: Schema = { type };
  const notes = constraintNotes(s, types);
  const description = [typeof s.description === 'string' ? s.description : '', notes].filter(Boolean).join(' ');
  if (description) out.description = description;
  if (typeof s.pattern === 'string') out.pattern = s.pattern;
  if (typeof s.format === 'string' && FORMATS.has(s.format)) out.format = s.format;
  if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string')) out.enum = s.enum;
  if (typeof s.title === 'string') out.title = s.title;
  if (type === 'object') {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toVapiSchema(v)]));
    if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required;
  }
  if (type === 'array' && typeof s.items === 'object' && s.items !== null) out.items = toVapiSchema(s.items as Schema);
  return out;
}

function constraintNotes(s: Schema, types: string[]): string {
  const notes: string[] = [];
  if (types.length > 1) notes.push(`(${types.join(' or ')})`);
  if (typeof s.minimum === 'number' && typeof s.maximum === 'number') notes.push(`(from ${s.minimum} to ${s.maximum})`);
  else if (typeof s.minimum === 'number') notes.push(`(at least ${s.minimum})`);
  else if (typeof s.maximum === 'number') notes.push(`(at most ${s.maximum})`);
  if (typeof s.maxLength === 'number') notes.push(`(at most ${s.maxLength} characters)`);
  if (s.default !== undefined && !(typeof s.description === 'string' && /default/i.test(s.description)))
    notes.push(`(default ${JSON.stringify(s.default)})`);
  const values = s.additionalProperties;
  if (typeof values === 'object' && values !== null && !s.properties) {
    const valueTypes = (values as Schema).type;
    notes.push(
      `(an object: keys are ids, values are ` +
        `${Array.isArray(valueTypes) ? valueTypes.join(' or ') : String(valueTypes ?? 'any')})`,
    );
  }
  return notes.join(' ');
}
