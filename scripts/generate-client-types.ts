// `npm run client:generate`: rewrites clients/typescript/openapi.json and src/schema.ts, and the
// dashboard's web/src/admin-api-types.ts.
import fs from 'node:fs';
import {
  CLIENT_OPENAPI,
  CLIENT_SCHEMA,
  generateClientFiles,
  generateWebAdminTypes,
  WEB_ADMIN_TYPES,
} from './client-types.ts';

const files = generateClientFiles();
fs.writeFileSync(CLIENT_OPENAPI, files.openapi);
fs.writeFileSync(CLIENT_SCHEMA, files.schema);
fs.writeFileSync(WEB_ADMIN_TYPES, generateWebAdminTypes());
console.log(`wrote ${CLIENT_OPENAPI}, ${CLIENT_SCHEMA} and ${WEB_ADMIN_TYPES}`);
