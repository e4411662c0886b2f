import type { FastifyInstance } from 'fastify';
import { OpenApiBuilder } from './openapi-builder.ts';
import type { ApiPart } from './route-contract.ts';

// The OpenAPI 3.1 document, built from the route contracts (route-contract.ts) whose zod schemas
// validate the requests and type the responses. The parts come from the composition
// (src/api-parts.ts): each feature declares its own routes, and http/ knows none of them.
type Json = Record<string, unknown>;

export function buildOpenApiDocument(publicBaseUrl: string, parts: ApiPart[]): Json {
  const doc = new OpenApiBuilder();
  for (const part of parts) {
    for (const n of part.schemas ?? []) n.as ? doc.shared(n.id, n.schema, n.as) : doc.output(n.id, n.schema);
    for (const [id, header] of Object.entries(part.headers ?? {})) doc.header(id, header);
    for (const route of part.routes) doc.contract(route);
  }
  return doc.build({
    info: {
      title: 'leadintake API',
      version: '1',
      description:
        'Submit leads from your forms and read back what the AI agent made of them. ' +
        'Every request needs `Authorization: Bearer <API key>`; a key acts only inside its own workspace. ' +
        'Clients poll GET /api/public/leads/{id} every 10 to 30 seconds (never more often than every 5) until the ' +
        'status is `booked`, `unqualified` or `needs_human`, or a voice call has `ended`.',
    },
    servers: [{ url: publicBaseUrl }],
    tags: [
      { name: 'Leads', description: 'The public lead API.' },
      { name: 'Dashboard', description: "The operators' dashboard API (session cookie, CSRF token)." },
    ],
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: "A workspace's API key (`leadintake key create`)." },
      sessionCookie: {
        type: 'apiKey',
        in: 'cookie',
        name: 'li_session',
        description: 'The session cookie `POST /api/admin/session` sets.',
      },
    },
    security: [{ bearerAuth: [] }],
  });
}

export function openApiRoute(publicBaseUrl: string, parts: ApiPart[]) {
  const document = buildOpenApiDocument(publicBaseUrl, parts);
  return async (scope: FastifyInstance): Promise<void> => {
    scope.get('/openapi.json', async () => document);
  };
}
