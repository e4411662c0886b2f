import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiDocument } from '../src/api-parts.ts';

// The generated types of the OpenAPI document: the TypeScript client's (the document it is built
// from and the types openapi-typescript makes of it) and the dashboard's (the admin part of the
// same document, by the same generator). `npm run client:generate` writes them; a test fails when
// the checked-in copies differ from what the current code generates.

export const CLIENT_DIR = path.resolve(import.meta.dirname, '../clients/typescript');
export const CLIENT_OPENAPI = path.join(CLIENT_DIR, 'openapi.json');
export const CLIENT_SCHEMA = path.join(CLIENT_DIR, 'src/schema.ts');
export const WEB_ADMIN_TYPES = path.resolve(import.meta.dirname, '../web/src/admin-api-types.ts');

type Json = { [key: string]: unknown };

export function generateClientFiles(): { openapi: string; schema: string } {
  const openapi = `${JSON.stringify(apiDocument('http://127.0.0.1:3000'), null, 2)}\n`;
  const header = '// Generated from openapi.json by openapi-typescript (`npm run client:generate`). Do not edit.\n';
  return { openapi, schema: header + openapiTypescript(openapi) };
}

/** The dashboard's types: the paths under /api/admin and the schemas they use, nothing of the public API. */
export function generateWebAdminTypes(): string {
  const doc = apiDocument('http://127.0.0.1:3000') as Json;
  const header =
    '// Generated from the admin part of /openapi.json by openapi-typescript (`npm run client:generate`).\n' +
    '// Do not edit: the dashboard names its types from it (web/src/api.ts, settings-types.ts).\n';
  return header + openapiTypescript(JSON.stringify(adminPart(doc)));
}

/** The document with only the admin paths, and only the components they reach through `$ref`. */
export function adminPart(doc: Json): Json {
  const paths = Object.fromEntries(Object.entries(doc.paths as Json).filter(([p]) => p.startsWith('/api/admin/')));
  const components = (doc.components ?? {}) as Record<string, Json>;
  const kept: Record<string, Json> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      const ref = k === '$ref' && typeof v === 'string' ? /^#\/components\/([^/]+)\/(.+)$/.exec(v) : null;
      if (ref) {
        const [, kind, name] = ref as unknown as [string, string, string];
        if (kept[kind]?.[name] === undefined && components[kind]?.[name] !== undefined) {
          (kept[kind] ??= {})[name] = components[kind][name];
          visit(components[kind][name]);
        }
      } else visit(v);
    }
  };
  visit(paths);
  // Security schemes are named by the operations, not referenced: keep them all.
  if (components.securitySchemes) kept.securitySchemes = components.securitySchemes;
  const sorted = Object.fromEntries(
    Object.entries(kept).map(([kind, all]) => [
      kind,
      Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b))),
    ]),
  );
  return { ...doc, paths, components: sorted };
}

function openapiTypescript(openapi: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-client-'));
  try {
    const input = path.join(dir, 'openapi.json');
    const output = path.join(dir, 'schema.ts');
    fs.writeFileSync(input, openapi);
    // openapi-typescript needs TypeScript 5's compiler API, which the client package has.
    const cli = path.join(CLIENT_DIR, 'node_modules/openapi-typescript/bin/cli.js');
    execFileSync(process.execPath, [cli, input, '--output', output], { stdio: 'pipe' });
    return fs.readFileSync(output, 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
