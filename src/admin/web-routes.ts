import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

// The dashboard's page at /admin (docs/DASHBOARD.md): the Vite build of web/ in dist/web (made by
// `npm run build`, which `npm start` and `npm test` run). Its hashed assets are cached for good;
// every other path under /admin is the single page's index.html, whose script routes on the path.

/** dist/web, from src/admin (sources) or dist/admin (compiled) alike. */
export const WEB_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');

export function webRoutes(dir = WEB_DIR) {
  return async (scope: FastifyInstance): Promise<void> => {
    const indexFile = path.join(dir, 'index.html');
    const built = fs.existsSync(indexFile);
    if (built) {
      await scope.register(fastifyStatic, {
        root: path.join(dir, 'assets'),
        prefix: '/admin/assets/',
        immutable: true,
        maxAge: '365d',
        index: false,
        wildcard: true,
      });
    }
    const page = async (_request: unknown, reply: import('fastify').FastifyReply) => {
      if (!built) {
        return reply
          .status(503)
          .type('text/plain; charset=utf-8')
          .send('The dashboard is not built: run `npm run build`.');
      }
      // Read per request: a rebuild while the service runs is served at once (a 1 KB file).
      // Its Content-Security-Policy and the other security headers: src/http/security-headers.ts.
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(await fs.promises.readFile(indexFile));
    };
    scope.get('/admin', page);
    scope.get('/admin/*', page);
  };
}
