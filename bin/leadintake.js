#!/usr/bin/env node
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
  const args = [...process.execArgv, '--experimental-strip-types', '--no-warnings', cli, ...process.argv.slice(2)];
  const res = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exit(res.status ?? 1);
}
