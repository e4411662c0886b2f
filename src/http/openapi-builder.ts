import { z } from 'zod';

// The OpenAPI document's builder: named zod schemas become components, operations are added by
// each part of the API (src/http/openapi.ts lists the parts).

type Json = Record<string, unknown>;
type Meta = { id: string };
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

  /** Names a schema of something clients send. */
  input(id: string, schema: z.ZodType): Ref {
    this.#input.add(schema, { id });
    return ref('schemas', id);
  }

  /** Names a schema of something the service answers. */
  output(id: string, schema: z.ZodType): Ref {
    this.#output.add(schema, { id });
    return ref('schemas', id);
  }

  /**
   * Names a schema used in both directions. `as` replaces what zod would write for it with an
   * equivalent JSON Schema (a recursive alias that code generators cannot type, for instance).
   */
  shared(id: string, schema: z.ZodType, as?: Json): Ref {
    this.#input.add(schema, { id });
    if (as) this.#replacements[id] = as;
    return this.output(id, schema);
  }

  header(id: string, header: Json): Ref {
    this.#headers[id] = header;
    return ref('headers', id);
  }

  operation(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, operation: Json): void {
    (this.#paths[path] ??= {})[method] = operation;
  }

  /** Each operation added so far, to amend (a response every operation of a part shares, say). */
  eachOperation(visit: (path: string, method: string, operation: Json) => void): void {
    for (const [path, item] of Object.entries(this.#paths)) {
      for (const [method, op] of Object.entries(item)) visit(path, method, op);
    }
  }

  build(top: { info: Json; servers: Json[]; tags?: Json[]; securitySchemes: Json; security: Json[] }): Json {
    const schemas = { ...this.#schemas(this.#input, 'input'), ...this.#schemas(this.#output, 'output'), ...this.#replacements };
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
    const out = z.toJSONSchema(registry, { io, uri: (id) => ref('schemas', id).$ref, unrepresentable: 'throw' }).schemas;
    // Each component is a schema inside the document, not a document of its own.
    return Object.fromEntries(Object.entries(out).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]));
  }
}
