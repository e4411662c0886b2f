import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// `leadintake worker` as a real child process, for the durability tests: started with a given
// environment, killed with SIGKILL (no shutdown code runs) or stopped with SIGTERM.

const BIN = fileURLToPath(new URL('../../bin/leadintake.js', import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** What it wrote, for the message of a failing assertion. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => chunks.push(c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => chunks.join('').slice(-4000),
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `leadintake <args>` to completion; returns its exit code and output. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `leadintake …` as a child process with `env` added to PATH; resolves when its output is closed. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runBin(args, { env: { PATH: process.env.PATH ?? '', ...env } });
}

/** `leadintake …` with exactly this environment (and folder); resolves when its output is closed. */
export function runBin(args: string[], opts: { env: Record<string, string>; cwd?: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Polls `check` until it returns a value (not undefined), or fails after `timeoutMs`. For state
 * other processes produce; the test asserts on what it returns, never on how long it took.
 */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
