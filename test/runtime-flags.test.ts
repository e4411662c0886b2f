// `npm start`, the `leadintake` command and the benchmark must run the service with the same
// Node flags: the benchmark's memory figures are only true of what users run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { SERVICE_NODE_FLAGS } from '../bench/procs.ts';

const root = new URL('..', import.meta.url);

test('npm start passes the service flags to node', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
  assert.match(pkg.scripts.start, new RegExp(`\\bnode ${SERVICE_NODE_FLAGS.join(' ')} dist/cli/main\\.js serve$`));
});

test("bin/leadintake.js's shebang passes the service flags to node", () => {
  const first = fs.readFileSync(new URL('bin/leadintake.js', root), 'utf8').split('\n')[0];
  assert.equal(first, `#!/usr/bin/env -S node ${SERVICE_NODE_FLAGS.join(' ')}`);
});

test('this Node accepts every service flag', () => {
  const out = execFileSync(process.execPath, [...SERVICE_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
  assert.equal(out, 'ok');
});
