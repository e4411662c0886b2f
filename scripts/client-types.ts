import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildOpenApiDocument } from '../src/http/openapi.ts';

// The TypeScript client's generated files: the OpenAPI document it is built from and the types
// openapi-typescript makes of it. `npm run client:generate` writes them; a test fails when the
// checked-in copies differ from what the current code generates.

export const CLIENT_DIR = path.resolve(import.meta.dirname, '../clients/typescript');
export const CLIENT_OPENAPI = path.join(CLIENT_DIR, 'openapi.json');
export const CLIENT_SCHEMA = path.join(CLIENT_DIR, 'src/schema.ts');

export function generateClientFiles(): { openapi: string; schema: string } {
  const openapi = JSON.stringify(buildOpenApiDocument('http://127.0.0.1:3000'), null, 2) + '\n';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-client-'));
  try {
    const input = path.join(dir, 'openapi.json');
    const output = path.join(dir, 'schema.ts');
    fs.writeFileSync(input, openapi);
    // openapi-typescript needs TypeScript 5's compiler API, which the client package has.
    const cli = path.join(CLIENT_DIR, 'node_modules/openapi-typescript/bin/cli.js');
    execFileSync(process.execPath, [cli, input, '--output', output], { stdio: 'pipe' });
    const header = '// Generated from openapi.json by openapi-typescript (`npm run client:generate`). Do not edit.\n';
    return { openapi, schema: header + fs.readFileSync(output, 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
