import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { SECRET_FILE_VARIABLES } from '../../src/config/config.ts';
import { configKeys } from '../helpers/config-keys.ts';

// .env.example is where a self-hoster learns what can be set: every variable the config schema
// reads must be in it, each with a comment, and it must name nothing the service or compose.yaml
// would ignore. Its required (uncommented) lines are exactly compose.yaml's `${VAR:?…}` guards.

const ENV_EXAMPLE = fs.readFileSync('.env.example', 'utf8');
const COMPOSE = fs.readFileSync('compose.yaml', 'utf8');
const CONFIGURATION = fs.readFileSync('docs/CONFIGURATION.md', 'utf8');

const VARIABLE_LINE = /^(#\s*)?([A-Z][A-Z0-9_]*)=/;

interface EnvLine {
  name: string;
  commentedOut: boolean;
  line: number;
}

export function envLines(text: string): EnvLine[] {
  return text.split('\n').flatMap((l, i) => {
    const m = VARIABLE_LINE.exec(l);
    return m ? [{ name: m[2]!, commentedOut: m[1] !== undefined, line: i + 1 }] : [];
  });
}

/** Variables whose group of lines has no describing comment above it. */
export function undescribed(text: string): string[] {
  const lines = text.split('\n');
  return envLines(text).flatMap(({ name, line }) => {
    let i = line - 2;
    while (i >= 0 && VARIABLE_LINE.test(lines[i]!)) i--;
    const above = lines[i] ?? '';
    return /^#\s*\S/.test(above) && !/^#\s*-{3,}/.test(above) ? [] : [name];
  });
}

/** The variables docs/CONFIGURATION.md's table names in its first column. */
function documentedVariables(): string[] {
  return CONFIGURATION.split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
}

const listed = envLines(ENV_EXAMPLE);
const listedNames = new Set(listed.map((l) => l.name));
const schema = configKeys();
const secretFiles = SECRET_FILE_VARIABLES.map((name) => `${name}_FILE`);
const composeVariables = new Set([...COMPOSE.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));

describe('.env.example', () => {
  it('lists every variable of the config schema', () => {
    assert.ok(schema.length > 40, `found ${schema.length} keys`);
    assert.deepEqual(
      schema.filter((k) => !listedNames.has(k)),
      [],
    );
  });

  it('lists the file variant of every secret that may be read from a file', () => {
    assert.deepEqual(
      secretFiles.filter((k) => !listedNames.has(k)),
      [],
    );
  });

  it('lists every variable docs/CONFIGURATION.md documents (the *_FILE variants and switches too)', () => {
    assert.deepEqual(
      documentedVariables().filter((k) => !listedNames.has(k)),
      [],
    );
  });

  it('names nothing that neither the service nor compose.yaml reads', () => {
    const known = new Set([...schema, ...secretFiles, ...documentedVariables(), ...composeVariables]);
    assert.deepEqual(
      [...listedNames].filter((n) => !known.has(n)),
      [],
    );
  });

  it('has a comment above each variable', () => {
    assert.deepEqual(undescribed(ENV_EXAMPLE), []);
  });

  it('lists each variable once', () => {
    assert.equal(listedNames.size, listed.length);
  });

  it("sets exactly compose.yaml's required variables, empty, so a copy left unfilled stops compose", () => {
    const required = [...new Set([...COMPOSE.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]!))].sort();
    const uncommented = listed.filter((l) => !l.commentedOut);
    assert.deepEqual(uncommented.map((l) => l.name).sort(), required);
    for (const { name } of uncommented) assert.match(ENV_EXAMPLE, new RegExp(`^${name}=$`, 'm'), name);
    assert.ok(required.includes('LEADINTAKE_ENCRYPTION_KEY'));
  });

  it('every variable compose.yaml reads is in it', () => {
    assert.deepEqual(
      [...composeVariables].filter((n) => !listedNames.has(n)),
      [],
    );
  });

  it('the checks can fail', () => {
    assert.deepEqual(
      envLines('# A\nFOO=\n# BAR=1\nnot=1\n').map((l) => [l.name, l.commentedOut]),
      [
        ['FOO', false],
        ['BAR', true],
      ],
    );
    assert.deepEqual(undescribed('# ----\n# A=1\n\n# what B is\n# B=2\n# C=3\n'), ['A']);
    assert.ok(configKeys().includes('PORT'));
  });
});
