import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The simulators run inside the service (demo, sandbox) but production code never depends on
// them: only src/simulators/ itself and the composition root that wires the sandbox may import
// from it. A new import elsewhere fails here.
const SRC = path.resolve('src');
const SIMULATORS = path.join(SRC, 'simulators');
const COMPOSITION_ROOTS = new Set([path.join(SRC, 'sandbox', 'sandbox-providers.ts')]);

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

export function simulatorImports(files: string[]): string[] {
  const offenders: string[] = [];
  for (const file of files) {
    if (file.startsWith(SIMULATORS + path.sep) || COMPOSITION_ROOTS.has(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]!);
      if (target.startsWith(SIMULATORS + path.sep)) offenders.push(`${path.relative(SRC, file)} → ${m[1]}`);
    }
  }
  return offenders;
}

test('nothing under src/ outside src/simulators/ imports a simulator', () => {
  assert.deepEqual(simulatorImports(tsFiles(SRC)), []);
});

test('the check sees an offending import (it can fail)', () => {
  const dir = fs.mkdtempSync(path.join(SRC, '.layout-probe-'));
  try {
    const probe = path.join(dir, 'probe.ts');
    fs.writeFileSync(probe, "import { startVapiSimulator } from '../simulators/vapi/vapi-simulator.ts';\n");
    assert.equal(simulatorImports([probe]).length, 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('src/ has no import cycles between production modules', () => {
  const files = tsFiles(SRC).filter((f) => !f.startsWith(SIMULATORS + path.sep));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps = [...fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => path.resolve(path.dirname(file), m[1]!));
    graph.set(file, deps);
  }
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, trail: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(f)), f].map((x) => path.relative(SRC, x)).join(' → '));
      return;
    }
    state.set(f, 'open');
    for (const d of graph.get(f) ?? []) visit(d, [...trail, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  assert.deepEqual(cycles, []);
});
