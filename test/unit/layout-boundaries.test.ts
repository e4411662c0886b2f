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

// The layers of src/, lowest first. A module imports from its own layer and the layers below it,
// never from one above: that is what lets a lower layer be read, tested and changed without the
// features on top. Names are folders under src/ (the longest that matches wins); '*.ts' is the
// files directly in src/ (entry points and the composition). A new folder or top-level layer that
// is not listed fails here until it is placed.
export const LAYERS: readonly (readonly string[])[] = [
  ['shared'], // error vocabulary, clock, logger, provider HTTP client, egress policy
  ['config'],
  ['db'],
  ['metrics', 'integration-log'],
  // Plumbing every route uses: error rendering, route contracts and the OpenAPI builder, the
  // webhooks' workspace-first hook, security headers, load shedding, health. Feature folders
  // register their own routes with it; it imports none of them.
  ['http'],
  ['jobs'],
  ['workspaces'], // a workspace, its sealed settings, its API keys (issued, listed, revoked)
  ['auth'], // a request's key authenticated (cached), the hourly rate limit
  // The features, peers of each other. workspaces/verify calls every provider's client, so it is
  // one of them although it lives under workspaces/.
  [
    'leads',
    'agent',
    'scheduling',
    'voice',
    'whatsapp',
    'webhooks',
    'operators',
    'sandbox',
    'contact-plan',
    'forms',
    'intake',
    'simulators',
    'workspaces/verify',
  ],
  ['admin'],
  ['*.ts'],
  ['cli'],
];

function layerUnit(rel: string): string | undefined {
  if (!rel.includes('/')) return '*.ts';
  const units = LAYERS.flat().filter((u) => u !== '*.ts' && (rel === u || rel.startsWith(`${u}/`)));
  return units.sort((a, b) => b.length - a.length)[0];
}

const RANK = new Map(LAYERS.flatMap((units, i) => units.map((u) => [u, i] as const)));

/** Imports that run to a higher layer (and files in no layer), as `from → to` under src/. */
export function upwardImports(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const from = path.relative(SRC, file).split(path.sep).join('/');
    const fromUnit = layerUnit(from);
    if (fromUnit === undefined) {
      found.push(`${from} is in no layer of LAYERS`);
      continue;
    }
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = path
        .relative(SRC, path.resolve(path.dirname(file), m[1]!))
        .split(path.sep)
        .join('/');
      const toUnit = layerUnit(to);
      if (toUnit !== undefined && RANK.get(toUnit)! > RANK.get(fromUnit)!) found.push(`${from} → ${to}`);
    }
  }
  return found;
}

test('src/ imports only downward through LAYERS', () => {
  // An upward import is fixed (the code moves down, or is handed in), never listed as an exception.
  assert.deepEqual(upwardImports(tsFiles(SRC)), [], 'imports that run to a higher layer');
});

test('the layer check sees an upward import and a file outside every layer (it can fail)', () => {
  const dirs = [
    fs.mkdtempSync(path.join(SRC, 'db', '.layout-probe-')),
    fs.mkdtempSync(path.join(SRC, '.layout-probe-')),
  ];
  try {
    const upward = path.join(dirs[0]!, 'probe.ts');
    fs.writeFileSync(
      upward,
      "import { normalizePhone } from '../../leads/phone.ts';\nimport type { Pool } from '../pool.ts';\n",
    );
    assert.deepEqual(upwardImports([upward]), [`${path.relative(SRC, upward)} → leads/phone.ts`]);
    const stray = path.join(dirs[1]!, 'probe.ts');
    fs.writeFileSync(stray, "import { AppError } from '../shared/errors.ts';\n");
    assert.deepEqual(upwardImports([stray]), [`${path.relative(SRC, stray)} is in no layer of LAYERS`]);
  } finally {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('src/ has no import cycles between production modules', () => {
  const files = tsFiles(SRC).filter((f) => !f.startsWith(SIMULATORS + path.sep));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps = [...fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map(
      (m) => path.resolve(path.dirname(file), m[1]!),
    );
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

// One composition root (src/composition.ts, its core in src/runtime.ts, and the sandbox's own in
// src/sandbox/sandbox-providers.ts) builds the shared clients, the secrets, the integration-log
// writer and the relay; services receive them. Verify's clients (one attempt each) are built by
// src/verify-clients.ts, which the CLI's verify loads alone.
export const BUILT_ONLY_IN: Record<string, readonly string[]> = {
  'resolveEncryptionKey(': ['runtime.ts', 'workspaces/secret-box.ts'],
  'new SecretBox(': ['runtime.ts'],
  'new WorkspaceService(': ['runtime.ts'],
  'new IntegrationLogWriter(': ['composition.ts'],
  'new OutboxRelay(': ['composition.ts'],
  'new CalcomClient(': ['composition.ts', 'sandbox/sandbox-providers.ts', 'verify-clients.ts'],
  'new VapiClient(': ['composition.ts', 'sandbox/sandbox-providers.ts', 'verify-clients.ts'],
  'new TurnstileClient(': ['composition.ts'],
  'new MetaLeadClient(': ['composition.ts'],
  // The app's own services over the composition's parts: buildApp builds them once per app.
  'new IntakeLimits(': ['app.ts'],
  'new FormAbuseGuard(': ['app.ts'],
  'new PublishableOrigins(': ['app.ts'],
  // Meta Lead Ads' one assembly (metaIntake), which buildApp calls once.
  'new MetaIntakeService(': ['intake/meta/meta-intake.ts'],
};

export function strayConstructions(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    const text = fs.readFileSync(file, 'utf8');
    for (const [call, allowed] of Object.entries(BUILT_ONLY_IN)) {
      if (!allowed.includes(rel) && text.includes(call)) found.push(`${rel}: ${call}`);
    }
  }
  return found;
}

test('clients, secrets, the integration-log writer and the relay are built only by the composition roots', () => {
  assert.deepEqual(strayConstructions(tsFiles(SRC).filter((f) => !f.startsWith(SIMULATORS + path.sep))), []);
});
