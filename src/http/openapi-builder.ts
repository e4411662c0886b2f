import { z } from 'zod';
import type { ContractResponse, NamedSchema, RouteContract } from './route-contract.ts';

// The OpenAPI document's builder: named zod schemas become components, and each route contract
// (route-contract.ts) an operation: its parameters and bodies are written from the same zod
// schemas that validate the requests.

type Json = Record<string, unknown>;
type Meta = { id: string };
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Ref = { $ref: string };

const ref = (kind: 'schemas' | 'headers', id: string): Ref => ({ $ref: `#/components/${kind}/${id}` });

/**
 * Collects named schemas, headers and operations. Named zod schemas become
 * `components/schemas/<id>` and every use of them (also inside other schemas) a `$ref` there:
 * this is what keeps recursive schemas such as JSON metadata valid OpenAPI.
 */
export class OpenApiBuilder {
  // Request bodies are described as clients may send them (defaults optional, unknown keys
  // allowed), responses as the service writes them: two registries, one per direction.
  readonly #input = z.registry<Meta>();
  readonly #output = z.registry<Meta>();
  readonly #headers: Record<string, Json> = {};
  readonly #paths: Record<string, Record<string, Json>> = {};
  readonly #replacements: Record<string, Json> = {};
  // Contracts share schemas (the error body, say): a name is added once, and only for one schema.
  readonly #named = new Map<string, z.ZodType>();
  readonly #operationIds = new Set<string>();

  /** Names a schema of something clients send. */
  input(id: string, schema: z.ZodType): Ref {
    if (this.#isNew(`input:${id}`, schema)) this.#input.add(schema, { id });
    return ref('schemas', id);
  }

  /** Names a schema of something the service answers. */
  output(id: string, schema: z.ZodType): Ref {
    if (this.#isNew(`output:${id}`, schema)) this.#output.add(schema, { id });
    return ref('schemas', id);
  }

  #isNew(key: string, schema: z.ZodType): boolean {
    const known = this.#named.get(key);
    if (known && known !== schema) throw new Error(`two schemas are named ${key}`);
    this.#named.set(key, schema);
    return !known;
  }

  /**
   * Names a schema used in both directions. `as` replaces what zod would write for it with an
   * equivalent JSON Schema (a recursive alias that code generators cannot type, for instance).
   */
  shared(id: string, schema: z.ZodType, as?: Json): Ref {
    this.input(id, schema);
    if (as) this.#replacements[id] = as;
    return this.output(id, schema);
  }

  /** The operation of a route contract. */
  contract(c: RouteContract): void {
    const parameters = [
      ...parametersOf('path', c.params),
      ...parametersOf('query', c.query),
      ...parametersOf('header', c.headers),
    ];
    const body = c.body;
    this.operation(c.method.toLowerCase() as Method, c.url.replace(/:(\w+)/g, '{$1}'), {
      tags: c.tags,
      ...(c.security ? { security: c.security } : {}),
      operationId: c.operationId,
      summary: c.summary,
      ...(c.description ? { description: c.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(body
        ? {
            requestBody: {
              required: true,
              ...(body.description ? { description: body.description } : {}),
              content: {
                'application/json': {
                  schema: this.#ref(body, 'input'),
                  ...(body.examples ? { examples: body.examples } : {}),
                },
              },
            },
          }
        : {}),
      responses: Object.fromEntries(Object.entries(c.responses).map(([status, r]) => [status, this.#response(r)])),
    });
  }

  #ref(n: NamedSchema, io: 'input' | 'output'): Ref {
    if (n.as) return this.shared(n.id, n.schema, n.as);
    return io === 'input' ? this.input(n.id, n.schema) : this.output(n.id, n.schema);
  }

  #response(r: ContractResponse): Json {
    const json = (body: NamedSchema | NamedSchema[]): Json => {
      const refs = (Array.isArray(body) ? body : [body]).map((n) => this.#ref(n, 'output'));
      return {
        'application/json': {
          schema: refs.length === 1 ? refs[0] : { oneOf: refs },
          ...(r.examples ? { examples: r.examples } : {}),
        },
      };
    };
    const content = r.body ? json(r.body) : r.content;
    return {
      description: r.description,
      ...(r.headers ? { headers: r.headers } : {}),
      ...(content ? { content } : {}),
    };
  }

  header(id: string, header: Json): Ref {
    this.#headers[id] = header;
    return ref('headers', id);
  }

  operation(method: Method, path: string, operation: Json): void {
    // Client generators name their functions and types after these; two routes cannot share one.
    const id = String(operation.operationId);
    if (this.#operationIds.has(id)) throw new Error(`two operations are named ${id}`);
    this.#operationIds.add(id);
    (this.#paths[path] ??= {})[method] = operation;
  }

  build(top: { info: Json; servers: Json[]; tags?: Json[]; securitySchemes: Json; security: Json[] }): Json {
    const schemas = {
      ...this.#schemas(this.#input, 'input'),
      ...this.#schemas(this.#output, 'output'),
      ...this.#replacements,
    };
    return {
      openapi: '3.1.1',
      info: top.info,
      servers: top.servers,
      ...(top.tags ? { tags: top.tags } : {}),
      security: top.security,
      paths: this.#paths,
      components: { schemas, headers: this.#headers, securitySchemes: top.securitySchemes },
    };
  }

  #schemas(registry: z.core.$ZodRegistry<Meta>, io: 'input' | 'output'): Record<string, Json> {
    const out = z.toJSONSchema(registry, {
      io,
      uri: (id) => ref('schemas', id).$ref,
      unrepresentable: 'throw',
    }).schemas;
    // Each component is a schema inside the document, not a document of its own.
    return Object.fromEntries(Object.entries(out).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]));
  }
}

/**
 * The parameters of a zod object, one per property, as a client writes them: the property's
 * description and example are the parameter's, the rest its schema. Path parameters are required.
 */
function parametersOf(where: 'path' | 'query' | 'header', schema: z.ZodObject | undefined): Json[] {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, { description, example, ...property }]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    ...(description !== undefined ? { description } : {}),
    schema: property,
    ...(example !== undefined ? { example } : {}),
  }));
}
