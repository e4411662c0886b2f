// `npm run build`, second half: the dashboard's page (web/) bundled by Vite into dist/web/, which
// the service serves at /admin (src/admin/web-routes.ts). Plain JavaScript: it runs before any
// TypeScript is compiled, on every Node the service supports.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'web');

await build({
  root,
  base: '/admin/',
  logLevel: 'warn',
  configFile: false,
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: path.join(root, '..', 'dist', 'web'),
    emptyOutDir: true,
    // Modern browsers only; no source maps shipped (the sources are in the repository).
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
