import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';

// A newcomer's first hour on the command line, on an embedded database of its own (a temporary data
// folder, as the README's reader has): the first start prints the demo operator's password; a
// second start prints the dashboard's address and where the keys and that password are kept, no
// secret; `demo` keeps the password (and the sessions signed in with it); Ctrl-C, sent to the
// process group as a terminal does, stops each with one line and exit code 0 — idle, and while
// sandbox leads are being worked.

const BIN = fileURLToPath(new URL('../../bin/leadintake.js', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-first-hour-'));
// As root, the embedded PostgreSQL runs as the `postgres` user, which must traverse the folder.
fs.chmodSync(dir, 0o755);
const children: ChildProcess[] = [];

after(async () => {
  for (const c of children) if (c.pid && c.exitCode === null && c.signalCode === null) process.kill(-c.pid, 'SIGKILL');
  // The embedded PostgreSQL runs in a process group of its own: after a failed run it may be left.
  const pidFile = path.join(dir, 'pg', 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    try {
      process.kill(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      // already gone
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Running {
  output(): string;
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Ctrl-C as a terminal sends it (to the whole process group); the exit code and what was printed after it. */
  interrupt(): Promise<{ code: number | null; after: string }>;
}

function start(args: string[], port: number): Running {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !['DATABASE_URL', 'LEADINTAKE_ENCRYPTION_KEY', 'PUBLIC_BASE_URL'].includes(k),
    ),
  );
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...env, LEADINTAKE_DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'info' },
    detached: true, // a process group of its own, like a command started in a terminal
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => out,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + 60_000;
        const check = () => {
          const m = pattern.exec(out);
          if (m) return resolve(m);
          if (child.exitCode !== null)
            return reject(new Error(`exited ${child.exitCode} before ${pattern}: ${out.slice(-3000)}`));
          if (Date.now() > deadline) return reject(new Error(`no ${pattern} within 60 s: ${out.slice(-3000)}`));
          setTimeout(check, 100);
        };
        check();
      }),
    async interrupt() {
      const mark = out.length;
      process.kill(-child.pid!, 'SIGINT');
      const code = await exited;
      return { code, after: out.slice(mark) };
    },
  };
}

/**
 * After Ctrl-C: exit code 0, exactly one stop line, no warning or error and no stack trace. Info
 * lines of the work still finishing (a turn that was running completes) are the service's usual log.
 */
function assertCleanStop(stop: { code: number | null; after: string }, stopLine: RegExp): void {
  const lines = stop.after.split('\n').filter((l) => l.trim() !== '');
  const level = (l: string) => {
    try {
      return (JSON.parse(l) as { level?: number }).level ?? null;
    } catch {
      return null;
    }
  };
  const text = (l: string) => (level(l) === null ? l : (JSON.parse(l) as { msg: string }).msg);
  assert.equal(stop.code, 0, stop.after);
  assert.equal(lines.filter((l) => stopLine.test(text(l))).length, 1, `one stop line, got:\n${stop.after}`);
  // A line written between the signal's sending and its handling belongs to the run, not the stop:
  // only what follows the stop line is judged.
  const stopAt = lines.findIndex((l) => stopLine.test(text(l)));
  const other = lines.slice(stopAt + 1).filter((l) => !(level(l) !== null && level(l)! < 40));
  assert.deepEqual(other, [], 'no warning, error or other output after Ctrl-C');
  assert.doesNotMatch(stop.after, /\n\s+at |Unhandled|uncaught/i);
}

async function signIn(base: string, email: string, password: string): Promise<{ status: number; cookie: string }> {
  const res = await fetch(`${base}/api/admin/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]! };
}

const sessionStatus = async (base: string, cookie: string) =>
  (await fetch(`${base}/api/admin/session`, { headers: { cookie } })).status;

async function submitSandboxLead(base: string, key: string, phone: string): Promise<void> {
  const res = await fetch(`${base}/api/public/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada Lovelace', phone, consent: true }),
  });
  assert.equal(res.status, 201, await res.text());
}

test('first start, second start, demo: the password is kept, ' +
  'the second start says where things are, Ctrl-C stops cleanly', {
  timeout: 300_000,
}, async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const keysFile = path.join(dir, 'demo-keys.txt');

  // The first start: the demo's keys and the operator's password, printed and saved.
  const first = start(['serve'], port);
  const [, email, password] = await first.waitFor(/Dashboard: \S+\/admin — sign in as (\S+) with the password (\S+)/);
  const key = (await first.waitFor(/WhatsApp workspace "demo-whatsapp", sandbox key: (li_test_\S+)/))[1]!;
  assert.ok(fs.readFileSync(keysFile, 'utf8').includes(password!), 'the password is saved with the keys');
  const signedIn = await signIn(base, email!, password!);
  assert.equal(signedIn.status, 200);
  // Ctrl-C while sandbox leads are being worked (their first turns run in this process).
  await Promise.all(
    ['0001', '0002', '0003'].map((suffix, i) => submitSandboxLead(base, key, `+1 555 01${i} ${suffix}`)),
  );
  assertCleanStop(await first.interrupt(), /^shutting down$/);

  // A second start: the address, and where the keys and the password are; no secret printed.
  const second = start(['serve'], port);
  await second.waitFor(/leadintake listening/);
  const banner = await second.waitFor(/leadintake is running\. Dashboard: (\S+)\/admin\n(.*)\n/);
  assert.equal(banner[1], base);
  assert.ok(banner[2]!.includes(keysFile), banner[2]);
  assert.doesNotMatch(second.output(), /li_test_|li_live_/);
  assert.ok(!second.output().includes(password!));
  assert.equal(await sessionStatus(base, signedIn.cookie), 200, 'the session survives a restart');
  // Ctrl-C at idle.
  assertCleanStop(await second.interrupt(), /^shutting down$/);

  // The demo keeps the password printed by the first start, and the sessions signed in with it.
  const demo = start(['demo', '--interval', '1'], port);
  const line = (await demo.waitFor(/Dashboard: .*\n/))[0];
  assert.ok(line.includes(keysFile) && line.includes('unchanged'), line);
  assert.ok(
    !demo.output().includes(`with the password ${password}`) && !/with the password [A-Za-z0-9_-]{12,}\s*$/m.test(line),
    line,
  );
  assert.equal(await sessionStatus(base, signedIn.cookie), 200, 'the demo ends no session');
  assert.equal((await signIn(base, email!, password!)).status, 200, 'the saved password still signs in');
  // Ctrl-C while the demo's leads are being worked.
  await demo.waitFor(/201 (queued|in_progress)/);
  assertCleanStop(await demo.interrupt(), /^Stopping the demo\.$/);
});
