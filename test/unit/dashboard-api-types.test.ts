import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { adminPart, generateWebAdminTypes, WEB_ADMIN_TYPES } from '../../scripts/client-types.ts';
import { apiDocument } from '../../src/api-parts.ts';

// The dashboard's API types (web/src/admin-api-types.ts) are generated from the admin part of
// /openapi.json by the TypeScript client's generator; the page's type names are aliases of them.
// A change of the admin API without `npm run client:generate` fails here, before `tsc -p web`
// could pass on stale types.

test('the checked-in web/src/admin-api-types.ts is what the current document generates', () => {
  assert.equal(
    fs.readFileSync(WEB_ADMIN_TYPES, 'utf8'),
    generateWebAdminTypes(),
    'web/src/admin-api-types.ts is stale: npm run client:generate',
  );
});

test('the admin part has every admin path and the schemas they use, and nothing of the public API', () => {
  const doc = apiDocument('http://127.0.0.1:3000') as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, unknown> };
  };
  const part = adminPart(doc) as typeof doc;
  const adminPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/admin/'));
  assert.ok(adminPaths.length > 10);
  assert.deepEqual(Object.keys(part.paths), adminPaths);
  const json = JSON.stringify(part);
  // Every schema an admin path names is there; the public API's own ones are not.
  for (const [, name] of json.matchAll(/"#\/components\/schemas\/([^"]+)"/g))
    assert.ok(part.components.schemas[name!], `${name} kept`);
  assert.ok(part.components.schemas.AdminInbox && part.components.schemas.AdminSession);
  assert.equal(part.components.schemas.LeadSubmission, undefined);
  assert.equal(part.components.schemas.LeadResponse, undefined);
});

test('adminPart follows references through components and leaves out what only the public API uses', () => {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const doc = {
    openapi: '3.1.0',
    paths: {
      '/api/public/leads': {
        post: { responses: { 200: { content: { 'application/json': { schema: ref('Public') } } } } },
      },
      '/api/admin/things': {
        get: { responses: { 200: { content: { 'application/json': { schema: ref('Outer') } } } } },
      },
    },
    components: {
      schemas: {
        Outer: { type: 'object', properties: { inner: ref('Inner') } },
        Inner: { type: 'string' },
        Public: { type: 'number' },
      },
      securitySchemes: { sessionCookie: { type: 'apiKey', in: 'cookie', name: 'li_session' } },
    },
  };
  const part = adminPart(doc) as typeof doc;
  assert.deepEqual(Object.keys(part.paths), ['/api/admin/things']);
  assert.deepEqual(Object.keys(part.components.schemas), ['Inner', 'Outer']);
  assert.deepEqual(part.components.securitySchemes, doc.components.securitySchemes);
});
