// Child processes of the benchmark: started here, tracked, and always stopped by their own
// pid (never by name). Also the small process utilities: free ports, HTTP readiness, RSS.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

/**
 * The flags the benchmark runs the service with: none, as `npm start` runs it, or BENCH_NODE_FLAGS
 * to measure others (docs/OPERATIONS.md, "Memory-tight hosts"). MALLOC_ARENA_MAX and the other
 * variables of the caller's environment reach the service as they are.
 */
export function benchNodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
}

/** Progress line on stderr, prefixed with seconds since the benchmark started. */
const t0 = Date.now();
export function progress(message: string): void {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
}

export interface Tracked {
  name: string;
  child: ChildProcess;
  /** Last lines the child wrote to stderr (for error messages). */
  stderrTail: () => string;
  exited: Promise<number | null>;
}

const live = new Set<Tracked>();

/** Spawns a child with stderr captured (tail kept) and registers it for cleanup. */
export function startChild(
  name: string,
  cmd: string,
  args: string[],
  opts: SpawnOptions & { stdout?: 'ignore' | 'pipe' | number } = {},
): Tracked {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', opts.stdout ?? 'ignore', 'pipe'] });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null)));
    child.once('error', () => resolve(-1));
  });
  const tracked: Tracked = { name, child, stderrTail: () => tail.trim(), exited };
  live.add(tracked);
  void exited.then(() => live.delete(tracked));
  return tracked;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. */
export async function stopChild(t: Tracked, graceMs = 15_000): Promise<void> {
  if (t.child.exitCode !== null || t.child.signalCode !== null) return;
  t.child.kill('SIGTERM');
  const timer = setTimeout(() => t.child.kill('SIGKILL'), graceMs);
  await t.exited;
  clearTimeout(timer);
}

/** Stops every child still running (used by the cleanup path, also on error). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...live].map((t) => stopChild(t, 10_000)));
}

/** Synchronous last resort (process exit): SIGKILL whatever is left, by pid. */
export function killAllChildrenNow(): void {
  for (const t of live) {
    if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill('SIGKILL');
  }
}

/** Runs a child to completion within `timeoutMs`; resolves with its stdout, rejects on failure. */
export async function runChild(
  name: string,
  cmd: string,
  args: string[],
  opts: SpawnOptions & { timeoutMs: number },
): Promise<string> {
  const t = startChild(name, cmd, args, { ...opts, stdout: 'pipe' });
  let out = '';
  t.child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  const timer = setTimeout(() => t.child.kill('SIGKILL'), opts.timeoutMs);
  const code = await t.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${name} exited with ${code}: ${t.stderrTail() || out.slice(-2000)}`);
  return out;
}

// The embedded database's helper: one free loopback port.
export { freePort } from '../../src/db/embedded.ts';

/** Polls `url` until it answers 200; fails when the child exits or `timeoutMs` passes. */
export async function waitForHttp200(url: string, t: Tracked, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (t.child.exitCode !== null || t.child.signalCode !== null) {
      throw new Error(`${t.name} exited before it was ready: ${t.stderrTail()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${t.name} was not ready at ${url} within ${timeoutMs} ms: ${t.stderrTail()}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM), or null when unreadable. */
export function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples VmRSS every `everyMs`; `peak` is the highest sample since start or the last reset. */
export class RssSampler {
  readonly #pid: number;
  readonly #timer: NodeJS.Timeout;
  peak = 0;
  last = 0;

  constructor(pid: number, everyMs = 250) {
    this.#pid = pid;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
    this.#timer.unref();
  }

  #sample(): void {
    const mb = procStatusMb(this.#pid, 'VmRSS');
    if (mb === null) return;
    this.last = mb;
    if (mb > this.peak) this.peak = mb;
  }

  stop(): void {
    this.#sample();
    clearInterval(this.#timer);
  }
}
