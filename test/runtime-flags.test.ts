// `npm start`, the `leadintake` command and the benchmark must run the service with the same
// Node flags and malloc setting: the benchmark's memory figures are only true of what users run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../bench/procs.ts';

const root = new URL('..', import.meta.url);

const envPrefix = Object.entries(SERVICE_ENV).map(([k, v]) => `${k}=${v}`).join(' ');

test('npm start and npm run demo pass the service environment and flags to node', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
  assert.match(pkg.scripts.start, new RegExp(`&& ${envPrefix} node ${SERVICE_NODE_FLAGS.join(' ')} dist/cli/main\\.js serve$`));
  assert.match(pkg.scripts.demo, new RegExp(`&& ${envPrefix} node ${SERVICE_NODE_FLAGS.join(' ')} dist/cli/main\\.js demo$`));
});

test("bin/leadintake.js's shebang passes the service flags to node", () => {
  const first = fs.readFileSync(new URL('bin/leadintake.js', root), 'utf8').split('\n')[0];
  assert.equal(first, `#!/usr/bin/env -S ${envPrefix} node ${SERVICE_NODE_FLAGS.join(' ')}`);
});

test("the shebang's environment reaches the process", () => {
  // env -S sets the variables before it runs node, and glibc reads MALLOC_ARENA_MAX at start.
  const bin = new URL('bin/leadintake.js', root).pathname;
  const probe = fs.readFileSync(bin, 'utf8').split('\n')[0]!.replace(/^#!/, '').split(/\s+/);
  const out = execFileSync(probe[0]!, [...probe.slice(1), '-e', 'process.stdout.write(JSON.stringify(process.env.MALLOC_ARENA_MAX))'], { encoding: 'utf8' });
  assert.equal(out, JSON.stringify(SERVICE_ENV.MALLOC_ARENA_MAX));
});

test('this Node accepts every service flag', () => {
  const out = execFileSync(process.execPath, [...SERVICE_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
  assert.equal(out, 'ok');
});
