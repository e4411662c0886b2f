import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The repository's docs and comments must stand alone: a user has none of the
// research notes and provider excerpts the service was written from, so nothing may send them
// there. Providers are cited by their own documentation's name instead.
const FORBIDDEN = [
  /\/shared\/(?:spec|research|provider-specs)\//,
  /providers\.md/,
  /perf-baseline/,
  /\b(?:V|TW|WA|CAL)-SPEC\b/,
  /\bTW-NODE\b/,
  /\bspec (?:section )?\d/,
];
const ROOTS = ['README.md', 'docs', 'src', 'bench', 'scripts', 'test', 'migrations', 'bin'];

function files(p: string): string[] {
  const stat = fs.statSync(p);
  if (stat.isFile()) return [p];
  return fs
    .readdirSync(p, { withFileTypes: true })
    .flatMap((e) =>
      e.name === 'node_modules' || e.name === 'results' || e.name.startsWith('.') ? [] : files(path.join(p, e.name)),
    );
}

export function references(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (FORBIDDEN.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
}

test('no doc or comment refers to files a user of the repository does not have', () => {
  const self = path.resolve('test/unit/docs-standalone.test.ts');
  const found = ROOTS.filter((r) => fs.existsSync(r))
    .flatMap(files)
    .filter((f) => /\.(md|ts|js|sql)$/.test(f) && path.resolve(f) !== self)
    .flatMap((f) => references(fs.readFileSync(f, 'utf8')).map((hit) => `${f}:${hit}`));
  assert.deepEqual(found, []);
});

test('the check sees such a reference (it can fail)', () => {
  assert.equal(references('// Vapi server messages (providers.md §1.4)').length, 1);
  assert.equal(references('See `../shared/spec/lead-intake-api.md`.').length, 1);
  assert.equal(references('// spec 2.5 transcript').length, 1);
  assert.deepEqual(references("// Vapi's OpenAPI document `Server`"), []);
});
