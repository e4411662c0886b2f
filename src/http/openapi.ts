import type { FastifyInstance } from 'fastify';
import { OpenApiBuilder } from './openapi-builder.ts';
import { describeAdminApi } from '../admin/admin-openapi.ts';
import { describePublicApi } from './public-api-openapi.ts';

// The OpenAPI 3.1 document, generated from the zod schemas that validate requests and type the
// responses. Each part of the API describes itself with a function of the builder
// (openapi-builder.ts); add a new part (the admin API, say) to DOCUMENT_PARTS.
type Json = Record<string, unknown>;

const DOCUMENT_PARTS: ((doc: OpenApiBuilder) => void)[] = [describePublicApi, describeAdminApi];

export function buildOpenApiDocument(publicBaseUrl: string): Json {
  const doc = new OpenApiBuilder();
  for (const part of DOCUMENT_PARTS) part(doc);
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
    tags: [{ name: 'Leads', description: 'The public lead API.' }, { name: 'Dashboard', description: "The operators' dashboard API (session cookie, CSRF token)." }],
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: "A workspace's API key (`leadintake key create`)." },
      sessionCookie: { type: 'apiKey', in: 'cookie', name: 'li_session', description: 'The session cookie `POST /api/admin/session` sets.' },
    },
    security: [{ bearerAuth: [] }],
  });
}

export function openApiRoute(publicBaseUrl: string) {
  const document = buildOpenApiDocument(publicBaseUrl);
  return async function (scope: FastifyInstance): Promise<void> {
    scope.get('/openapi.json', async () => document);
  };
}
