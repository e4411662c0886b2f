import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { freePort } from '../../src/db/embedded.ts';

// The README's first section as a test: on a fresh copy of the project (its own dist/ and an empty
// data folder, so nothing is shared with the other test files), `npm start` prints a curl; running
// that exact line submits a sandbox lead, and GET shows it `booked` within 30 seconds.

const run = promisify(execFile);
const ROOT = path.resolve('.');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-readme-'));
// As root, the embedded PostgreSQL runs as the `postgres` user, which must traverse the folder.
fs.chmodSync(dir, 0o755);
let child: ReturnType<typeof spawn> | null = null;

after(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    process.kill(-child.pid, 'SIGTERM'); // npm and the service it started: one process group
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('npm start on an empty data folder prints a curl; running it gives a lead that is booked within 30 s', {
  timeout: 240_000,
}, async () => {
  for (const entry of [
    'src',
    'web',
    'migrations',
    'bin',
    'scripts',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
  ]) {
    fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const port = await freePort();
  // Only what the README's reader has: no DATABASE_URL, the default data folder (./.leadintake).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !['DATABASE_URL', 'LEADINTAKE_DATA_DIR', 'LEADINTAKE_ENCRYPTION_KEY', 'PUBLIC_BASE_URL'].includes(k),
    ),
  );
  child = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...env, PORT: String(port) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const curl = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = out.split('\n').find((l) => l.startsWith('curl -s -X POST'));
      if (line) return resolve(line);
      if (child!.exitCode !== null)
        return reject(new Error(`npm start exited ${child!.exitCode}: ${out.slice(-2000)}`));
      setTimeout(check, 200);
    };
    check();
  });
  assert.match(out, /sandbox key: li_test_/);
  // The demo operator: the printed password signs in to the dashboard, which is served at /admin.
  const signIn = /Dashboard: (\S+)\/admin — sign in as (\S+) with the password (\S+)/.exec(out);
  assert.ok(signIn, out);
  const session = await fetch(`${signIn[1]}/api/admin/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: signIn[2], password: signIn[3] }),
  });
  assert.equal(session.status, 200);
  assert.deepEqual(
    ((await session.json()) as { workspaces: Array<{ slug: string; role: string }> }).workspaces.map(
      (w) => `${w.slug}:${w.role}`,
    ),
    ['demo-voice:owner', 'demo-whatsapp:owner'],
  );
  assert.equal((await fetch(`${signIn[1]}/admin`)).status, 200);
  assert.ok(fs.existsSync(path.join(dir, '.leadintake', 'demo-keys.txt')), 'the keys are written to the data folder');

  const posted = JSON.parse((await run('sh', ['-c', curl])).stdout);
  assert.equal(posted.ok, true, JSON.stringify(posted));
  const key = /Bearer (li_test_[A-Za-z0-9_-]+)/.exec(curl)![1]!;
  const deadline = Date.now() + 30_000;
  let lead: { status: string; livemode: boolean } | undefined;
  while (Date.now() < deadline) {
    const res = await fetch(`http://127.0.0.1:${port}/api/public/leads/${posted.leadId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    lead = ((await res.json()) as { lead: typeof lead }).lead;
    if (lead?.status === 'booked') break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.equal(lead?.status, 'booked', `not booked within 30 s: ${JSON.stringify(lead)}`);
  assert.equal(lead?.livemode, false);
});
