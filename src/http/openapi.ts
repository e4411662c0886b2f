import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { leadSubmissionDocSchema } from '../leads/lead-submission.ts';

// The OpenAPI document is generated from the same zod schemas that validate requests.
function buildDocument(publicBaseUrl: string) {
  const body = z.toJSONSchema(leadSubmissionDocSchema, { io: 'input', unrepresentable: 'any', target: 'openapi-3.0' });
  const error = {
    type: 'object',
    required: ['ok', 'error'],
    properties: {
      ok: { type: 'boolean', enum: [false] },
      error: { type: 'string' },
      message: { type: 'string' },
      issues: { type: 'array', items: { type: 'object', properties: { path: { type: 'array', items: { type: 'string' } }, message: { type: 'string' } } } },
      leadId: { type: 'string', format: 'uuid' },
    },
  };
  const errors = (codes: number[]) =>
    Object.fromEntries(codes.map((c) => [String(c), { description: String(c), content: { 'application/json': { schema: error } } }]));
  return {
    openapi: '3.0.3',
    info: { title: 'leadintake public API', version: '1' },
    servers: [{ url: publicBaseUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/api/public/leads': {
        post: {
          summary: 'Submit a lead',
          requestBody: { required: true, content: { 'application/json': { schema: body } } },
          responses: { '201': { description: 'Lead accepted' }, ...errors([400, 401, 404, 409, 413, 429, 500, 502]) },
        },
      },
      '/api/public/leads/{id}': {
        get: {
          summary: 'Read a lead',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: { '200': { description: 'The lead and its latest call' }, ...errors([401, 404, 429, 500]) },
        },
      },
    },
  };
}

export function openApiRoute(publicBaseUrl: string) {
  const document = buildDocument(publicBaseUrl);
  return async function (scope: FastifyInstance): Promise<void> {
    scope.get('/openapi.json', async () => document);
  };
}
