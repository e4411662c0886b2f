import { Ajv2020 } from 'ajv/dist/2020.js';
import { apiDocument } from '../../src/api-parts.ts';

// Checks real responses against the OpenAPI document: the status must be documented for the
// operation, the body must match its schema, and every header the document marks required must
// be there. test-app.ts runs it on every response of every documented route of every test.

export interface ObservedResponse {
  method: string;
  /** Fastify's route template, e.g. `/api/public/leads/:id`. */
  route: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

type Json = Record<string, any>;

export class OpenApiConformance {
  readonly document: Json;
  readonly #ajv: InstanceType<typeof Ajv2020>;

  constructor(document: Json = apiDocument('http://127.0.0.1')) {
    this.document = document;
    // Formats are not asserted (uuid and date-time carry patterns that are); unknown keywords
    // of the OpenAPI document around the schemas are ignored.
    this.#ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    this.#ajv.addSchema(document, 'openapi');
  }

  /** Whether the document describes this route at all (others are not checked). */
  operation(method: string, route: string): Json | undefined {
    const path = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    return this.document.paths?.[path]?.[method.toLowerCase()];
  }

  /** The ways the response departs from the document; empty when it conforms. */
  problems(r: ObservedResponse): string[] {
    const op = this.operation(r.method, r.route);
    if (!op) return [];
    const where = `${r.method} ${r.route} → ${r.status}`;
    const response = op.responses?.[String(r.status)];
    if (!response) return [`${where}: status not documented`];
    const out: string[] = [];
    for (const [name, h] of Object.entries<Json>(response.headers ?? {})) {
      if (h.required && r.headers[name.toLowerCase()] === undefined) out.push(`${where}: header ${name} missing`);
    }
    const content = response.content?.['application/json'];
    if (!content) return out;
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      return [...out, `${where}: body is not JSON`];
    }
    const pointer = [
      'paths',
      pathOf(this.document, op),
      r.method.toLowerCase(),
      'responses',
      String(r.status),
      'content',
      'application/json',
      'schema',
    ]
      .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    const validate = this.#ajv.getSchema(`openapi#/${pointer}`);
    if (!validate) return [...out, `${where}: no schema at ${pointer}`];
    if (!validate(body)) out.push(`${where}: ${this.#ajv.errorsText(validate.errors)} in ${r.body.slice(0, 300)}`);
    return out;
  }
}

function pathOf(document: Json, op: Json): string {
  for (const [path, item] of Object.entries<Json>(document.paths)) if (Object.values(item).includes(op)) return path;
  throw new Error('operation not in the document');
}
