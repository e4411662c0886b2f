import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// What a production install carries: the dashboard's build tools and libraries are bundled into
// dist/web by `npm run build`, so they are devDependencies and nothing the service runs imports
// them; and no dependency with a published advisory we know of.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const BUILD_ONLY = ['vite', 'react', 'react-dom', 'chart.js'];

test("the dashboard's build-time packages are devDependencies, and src/ never imports them", () => {
  for (const name of BUILD_ONLY) {
    assert.equal(pkg.dependencies[name], undefined, `${name} in dependencies`);
    assert.ok(pkg.devDependencies[name], `${name} in devDependencies`);
  }
  const src = path.join(ROOT, 'src');
  const files = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const names = BUILD_ONLY.map((n) => n.replace('.', '\\.')).join('|');
  const imports = new RegExp(`from '(${names})(/[^']*)?'|import\\('(${names})['/]`);
  for (const file of files) assert.doesNotMatch(fs.readFileSync(path.join(src, file), 'utf8'), imports, file);
});

test('@fastify/static is at 10.1.3 or later (GHSA-83w8-p2f5-377r)', () => {
  const installed = createRequire(import.meta.url)('@fastify/static/package.json').version as string;
  const [major, minor, patch] = installed.split('.').map(Number) as [number, number, number];
  assert.ok(major > 10 || (major === 10 && (minor > 1 || (minor === 1 && patch >= 3))), installed);
  assert.match(pkg.dependencies['@fastify/static'], /^\^(10\.1\.([3-9]|\d\d)|1[1-9]\.)/);
});
