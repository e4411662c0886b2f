// `npm run client:generate`: rewrites clients/typescript/openapi.json and src/schema.ts.
import fs from 'node:fs';
import { CLIENT_OPENAPI, CLIENT_SCHEMA, generateClientFiles } from './client-types.ts';

const files = generateClientFiles();
fs.writeFileSync(CLIENT_OPENAPI, files.openapi);
fs.writeFileSync(CLIENT_SCHEMA, files.schema);
console.log(`wrote ${CLIENT_OPENAPI} and ${CLIENT_SCHEMA}`);
