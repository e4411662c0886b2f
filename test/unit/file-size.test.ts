// No source or test file over 400 lines (the project's rule: most under 200), and no line of
// TypeScript, JavaScript or CSS over 120 characters (the formatter's width; it does not break
// strings and comments, so they are wrapped by hand). The formatter wraps long lines, which
// lengthens files; a file past the limit is split by what it does, not trimmed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const MAX_LINES = 400;
const MAX_WIDTH = 120;
const ROOTS = [
  'src',
  'web/src',
  'scripts',
  'bench',
  'test',
  'bin',
  'clients/typescript/src',
  'clients/typescript/examples',
];
// Written by generators and compared with their output by tests, never edited by hand.
const GENERATED = new Set(['web/src/admin-api-types.ts', 'clients/typescript/src/schema.ts']);

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'snapshots' ? [] : sourceFiles(p);
    return /\.(ts|tsx|js|css)$/.test(e.name) ? [p] : [];
  });
}

export function oversized(files: string[], max = MAX_LINES): string[] {
  return files
    .filter((f) => !GENERATED.has(f.split(path.sep).join('/')))
    .map((f) => [f, fs.readFileSync(f, 'utf8').split('\n').length - 1] as const)
    .filter(([, n]) => n > max)
    .map(([f, n]) => `${f}: ${n} lines`);
}

/** Lines wider than `max` characters (code points), as `file:line: width`. */
export function wideLines(files: string[], max = MAX_WIDTH): string[] {
  return files
    .filter((f) => !GENERATED.has(f.split(path.sep).join('/')))
    .flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => [i + 1, [...line].length] as const)
        .filter(([, width]) => width > max)
        .map(([n, width]) => `${f}:${n}: ${width}`),
    );
}

test(`no line of a source or test file is over ${MAX_WIDTH} characters`, () => {
  assert.deepEqual(wideLines(ROOTS.flatMap(sourceFiles)), []);
});

test('the width check sees a wide line (it can fail)', () => {
  const dir = fs.mkdtempSync(path.join('test', '.width-probe-'));
  try {
    const probe = path.join(dir, 'wide.ts');
    fs.writeFileSync(probe, `// ${'é'.repeat(MAX_WIDTH - 3)}\n// ${'x'.repeat(MAX_WIDTH - 2)}\n`);
    assert.deepEqual(wideLines([probe]), [`${probe}:2: ${MAX_WIDTH + 1}`]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(`no source or test file is over ${MAX_LINES} lines`, () => {
  assert.deepEqual(oversized(ROOTS.flatMap(sourceFiles)), []);
});

test('the check sees a long file (it can fail)', () => {
  const dir = fs.mkdtempSync(path.join('test', '.size-probe-'));
  try {
    const probe = path.join(dir, 'long.ts');
    fs.writeFileSync(probe, 'export const x = 1;\n'.repeat(MAX_LINES + 1));
    assert.deepEqual(oversized([probe]), [`${probe}: ${MAX_LINES + 1} lines`]);
    fs.writeFileSync(probe, 'export const x = 1;\n'.repeat(MAX_LINES));
    assert.deepEqual(oversized([probe]), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
