import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

// docs/ARCHITECTURE.md, "What the database does by itself", is the map of what the database writes
// on its own; a trigger missing from it is work a reader of the code cannot see.
export function unnamedTriggers(schema: string, doc: string): string[] {
  const names = [...schema.matchAll(/^CREATE TRIGGER (\w+)/gm)].map((m) => m[1]!);
  return names.filter((name) => !doc.includes(`\`${name}\``));
}

test('docs/ARCHITECTURE.md names every trigger of schema/current.sql', () => {
  const schema = fs.readFileSync('schema/current.sql', 'utf8');
  assert.ok(/^CREATE TRIGGER /m.test(schema), 'the schema has triggers');
  assert.deepEqual(unnamedTriggers(schema, fs.readFileSync('docs/ARCHITECTURE.md', 'utf8')), []);
});

test('a trigger the page does not name is reported (the check can fail)', () => {
  const schema = 'CREATE TRIGGER named AFTER INSERT ON t\nCREATE TRIGGER unnamed AFTER INSERT ON t\n';
  assert.deepEqual(unnamedTriggers(schema, 'Here `named` runs.'), ['unnamed']);
});
