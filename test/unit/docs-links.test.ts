import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

// The README and docs/ send a reader to other pages, often to a named section of one
// (`docs/OPERATIONS.md`, "Deploying"). Pages get rewritten and sections renamed; a reference that
// leads nowhere is found here instead of by a reader.

const PAGES = ['README.md', ...walk('docs')];
const DECISIONS = 'docs/decisions';

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.name.endsWith('.md') ? [p] : [];
  });
}

const flat = (text: string) => text.replace(/\s+/g, ' ');

/**
 * Paths of the repository a page names in backticks, or as a markdown link outside code (relative
 * to the page). The bench's results are written by a run, not kept.
 */
export function namedPaths(page: string, text: string): string[] {
  const quoted = [
    ...text.matchAll(/`((?:docs|bench|clients|test|migrations|scripts)\/[\w./-]+\.(?:md|ts|sql|js|png))`/g),
  ]
    .map((m) => m[1]!)
    .filter((p) => !p.startsWith('bench/results/'));
  const linked = [...text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/.test(href))
    .map((href) => path.join(path.dirname(page), href));
  return [...quoted, ...linked];
}

/** Each `docs/X.md, "Section"` reference of a text whose section text the named page lacks. */
export function deadSections(text: string, read: (file: string) => string | null): string[] {
  return [...flat(text).matchAll(/`?(docs\/[\w/.-]+\.md)`?,? "([^"]+)"/g)].flatMap((m) => {
    const target = read(m[1]!);
    return target !== null && !flat(target).includes(m[2]!) ? [`${m[1]}, "${m[2]}"`] : [];
  });
}

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);

describe('the docs lead somewhere', () => {
  it('every file a page names exists', () => {
    const missing = PAGES.flatMap((page) =>
      namedPaths(page, fs.readFileSync(page, 'utf8'))
        .filter((p) => !fs.existsSync(p))
        .map((p) => `${page}: ${p}`),
    );
    assert.deepEqual(missing, []);
  });

  it('every section a page names is in the page it names', () => {
    const dead = PAGES.flatMap((page) => deadSections(fs.readFileSync(page, 'utf8'), read).map((d) => `${page}: ${d}`));
    assert.deepEqual(dead, []);
  });

  it('the decision records are all in their index, each with its four parts', () => {
    const index = fs.readFileSync(path.join(DECISIONS, 'README.md'), 'utf8');
    const records = fs.readdirSync(DECISIONS).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
    assert.ok(records.length > 0);
    for (const r of records) {
      assert.ok(index.includes(`](${r})`), `${r} is listed in docs/decisions/README.md`);
      const text = fs.readFileSync(path.join(DECISIONS, r), 'utf8');
      assert.match(text, new RegExp(`^# ${Number(r.slice(0, 4))}\\. `), `${r} is headed by its number`);
      for (const part of ['**Context.**', '**Decision.**', '**Consequences.**'])
        assert.ok(text.includes(part), `${r} has ${part}`);
    }
  });

  it('the checks see a dead reference (they can fail)', () => {
    assert.deepEqual(
      namedPaths(
        'docs/A.md',
        'see `docs/NOPE.md` and [x](decisions/0001-x.md), [web](https://example.com), `[text](url)`',
      ),
      ['docs/NOPE.md', 'docs/decisions/0001-x.md'],
    );
    const pages: Record<string, string> = { 'docs/B.md': '# B\n\n## Deploying\n' };
    const readFake = (f: string) => pages[f] ?? null;
    assert.deepEqual(deadSections('(`docs/B.md`,\n"Deploying") and docs/B.md, "Gone away"', readFake), [
      'docs/B.md, "Gone away"',
    ]);
  });
});
