import { buildOpenApiDocument } from './http/openapi.ts';
import type { ApiPart } from './http/route-contract.ts';
import { PUBLIC_API } from './leads/public-api-contracts.ts';
import { ADMIN_API } from './admin/admin-api.ts';

// The parts of the API with their route contracts, handed to the OpenAPI document (app.ts serves
// it at /openapi.json; `npm run client:generate` writes it for the TypeScript client). A new part
// of the API is added here.

export const API_PARTS: ApiPart[] = [PUBLIC_API, ADMIN_API];

/** The whole document, as /openapi.json serves it. */
export function apiDocument(publicBaseUrl: string): Record<string, unknown> {
  return buildOpenApiDocument(publicBaseUrl, API_PARTS);
}
