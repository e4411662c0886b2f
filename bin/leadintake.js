#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=2 --heap-growing-percent=30 --no-maglev
// Node's flags and malloc setting as in `npm start` (test/runtime-flags.test.ts keeps them in
// step): V8's young generation otherwise grows to 3 × 16 MB under load, its old generation to
// several times the live heap before a full GC, Maglev's compilations hold ~15 MB at the API's
// peak, and glibc keeps what V8's background threads free in arenas of their own
// (docs/PERFORMANCE.md, "Memory: no Maglev, one malloc arena"). Node 20 accepts these flags
// too, so an old Node gets as far as the version check below.
// Entry point of the `leadintake` command. The sources are TypeScript run by Node's
// built-in type stripping (on by default from Node 22.18 / 23.6). On an older 22.x we
// re-run ourselves with the flag rather than ship a build step.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireSupportedNode } from '../scripts/check-node.js';

// First of all: on a Node that is too old, one line says what to do instead of a parser error.
requireSupportedNode();

if (process.features.typescript) {
  await import('../src/cli/main.ts');
} else {
  const cli = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
  const res = spawnSync(process.execPath, [...process.execArgv, '--experimental-strip-types', '--no-warnings', cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(res.status ?? 1);
}
