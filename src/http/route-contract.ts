import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { parse } from '../shared/schema-parse.ts';

// One contract per route: the method, URL, zod schemas of what the client sends and the answers
// the route gives. The route is registered from it (registerRoute) and the OpenAPI document is
// built from it (OpenApiBuilder.contract), so the two cannot drift apart.

type Json = Record<string, unknown>;
export type Examples = Record<string, { summary: string; value: unknown }>;
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type AnyObject = z.ZodObject;

/** A schema with the name of its component in the document (`#/components/schemas/<id>`). */
export interface NamedSchema<T extends z.ZodType = z.ZodType> {
  id: string;
  schema: T;
  /** An equivalent JSON Schema written instead of zod's (a recursive alias code generators cannot type). */
  as?: Json;
}

export const named = <T extends z.ZodType>(id: string, schema: T, as?: Json): NamedSchema<T> =>
  as ? { id, schema, as } : { id, schema };

export interface ContractResponse {
  description: string;
  /** The JSON body: one named schema, or several (`oneOf`). */
  body?: NamedSchema | NamedSchema[];
  examples?: Examples;
  /** OpenAPI response headers, as written in the document. */
  headers?: Json;
  /** Another media type than JSON (a CSV file, an event stream), as written in the document. */
  content?: Json;
}

export interface RouteContract<
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends AnyObject | undefined = AnyObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: HttpMethod;
  /** Fastify's syntax (`/api/admin/workspaces/:slug`); the document writes `{slug}`. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Absent: the document's default (the API key). */
  security?: Json[];
  /** Path parameters. Their `.meta()` (description, format, example) goes into the document. */
  params?: P;
  query?: Q;
  /** Headers a client sends (the CSRF token): documented only, the checks read them themselves. */
  headers?: AnyObject;
  body?: NamedSchema<NonNullable<B>> & { description?: string; examples?: Examples };
  responses: Record<string, ContractResponse>;
}

// Optional properties of the contract are `X | undefined`: the parsed value is X's output.
type Out<T> = [NonNullable<T>] extends [z.ZodType] ? z.output<NonNullable<T>> : undefined;

/**
 * What the client sent, through the contract's schemas. Each is parsed when the handler asks for
 * it, so a handler decides the order (sign-in and permission before a bad field is reported).
 */
export interface RouteInput<C extends RouteContract> {
  params(): Out<C['params']>;
  query(): Out<C['query']>;
  body(): NonNullable<C['body']> extends NamedSchema<infer B> ? z.output<B> : undefined;
}

type Params<C extends RouteContract> = [NonNullable<C['params']>] extends [AnyObject]
  ? z.input<NonNullable<C['params']>>
  : Record<string, string>;
export type ContractRequest<C extends RouteContract> = FastifyRequest<{ Params: Params<C> }>;
export type RouteHandler<C extends RouteContract> = (
  request: ContractRequest<C>,
  reply: FastifyReply,
  input: RouteInput<C>,
) => Promise<unknown>;

/** Declares a contract with its schemas' types kept (the handler's input is typed from them). */
export function defineRoute<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(contract: RouteContract<P, Q, B>): RouteContract<P, Q, B> {
  return contract;
}

/** Registers the route of a contract; `config` is the route's Fastify config (the audit name, say). */
export function registerRoute<C extends RouteContract>(
  scope: FastifyInstance,
  contract: C,
  handler: RouteHandler<C>,
  config?: FastifyContextConfig,
): void {
  scope.route({
    method: contract.method,
    url: contract.url,
    ...(config ? { config } : {}),
    handler: async (request, reply) => handler(request as ContractRequest<C>, reply, inputOf(contract, request)),
  });
}

function inputOf<C extends RouteContract>(contract: C, request: FastifyRequest): RouteInput<C> {
  // Fastify's own schema compilers are off (app.ts): every route validates through the one mapping
  // of src/shared/schema-parse.ts, so every error has our shape.
  const of = (schema: z.ZodType | undefined, value: unknown) => (schema ? parse(schema, value) : undefined);
  return {
    params: () => of(contract.params, request.params),
    query: () => of(contract.query, request.query),
    body: () => of(contract.body?.schema, request.body),
  } as RouteInput<C>;
}

/** A part of the API in the document: its routes' contracts, and the components they refer to by name. */
export interface ApiPart {
  routes: RouteContract[];
  /**
   * Schemas of answers that others refer to by name (the lead inside the read answer); with `as`, of both directions.
   */
  schemas?: NamedSchema[];
  /** `#/components/headers/<id>`, which the routes' response headers refer to. */
  headers?: Record<string, Json>;
}
