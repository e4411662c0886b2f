// CPU accounting per configuration, from /proc: the machine's busy time, the service, the
// PostgreSQL server (embedded: the postmaster's process tree), the load generator, and
// everything that is not ours. The machine may be shared; "other" makes that visible.
import fs from 'node:fs';
import { progress, sleep } from './procs.ts';

const TICK = 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux

interface ProcTimes {
  ppid: number;
  /** utime + stime of the process itself, seconds. */
  own: number;
  /** cutime + cstime: children it has reaped, seconds. */
  reaped: number;
}

function readProc(pid: number): ProcTimes | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    return {
      ppid: Number(f[1]),
      own: (Number(f[11]) + Number(f[12])) / TICK,
      reaped: (Number(f[13]) + Number(f[14])) / TICK,
    };
  } catch {
    return null;
  }
}

function allProcs(): Map<number, ProcTimes> {
  const out = new Map<number, ProcTimes>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) out.set(Number(name), p);
  }
  return out;
}

/** CPU seconds of a process tree: live members plus what they reaped (counted once each). */
function treeSeconds(procs: Map<number, ProcTimes>, root: number): number {
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(pid);
    children.set(p.ppid, list);
  }
  let sum = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const p = procs.get(pid);
    if (!p) continue;
    sum += p.own + p.reaped;
    stack.push(...(children.get(pid) ?? []));
  }
  return sum;
}

function machineBusySeconds(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  void idle;
  void iowait;
  return (user + nice + system + irq + softirq + steal) / TICK;
}

export interface CpuSnapshot {
  wall: number;
  busy: number;
  ours: number;
  self: number;
  selfReaped: number;
  service: number;
  pg: number;
}

export interface CpuUse {
  /** Cores (2.00 = both cores of this machine). */
  busy: number;
  service: number;
  /** null when the server is not ours (BENCH_DATABASE_URL): then it is inside `other`. */
  pg: number | null;
  loadgen: number;
  other: number;
}

export class CpuMeter {
  servicePid: number | null = null;
  readonly #pgPid: () => number | null;

  constructor(pgPid: () => number | null) {
    this.#pgPid = pgPid;
  }

  snapshot(): CpuSnapshot {
    const procs = allProcs();
    const me = procs.get(process.pid)!;
    const pg = this.#pgPid();
    return {
      wall: performance.now() / 1000,
      busy: machineBusySeconds(),
      ours: treeSeconds(procs, process.pid),
      self: me.own,
      selfReaped: me.reaped,
      service: this.servicePid ? treeSeconds(procs, this.servicePid) : 0,
      pg: pg ? treeSeconds(procs, pg) : 0,
    };
  }

  /**
   * Cores used between two snapshots. The load generator is this process (autocannon) or a child it waited for (wrk,
   * pgbench).
   */
  use(a: CpuSnapshot, b: CpuSnapshot, loadgen: 'self' | 'child'): CpuUse {
    const secs = b.wall - a.wall;
    const pgKnown = this.#pgPid() !== null;
    const lg = loadgen === 'self' ? b.self - a.self : b.selfReaped - a.selfReaped;
    return {
      busy: (b.busy - a.busy) / secs,
      service: (b.service - a.service) / secs,
      pg: pgKnown ? (b.pg - a.pg) / secs : null,
      loadgen: lg / secs,
      other: Math.max(0, (b.busy - a.busy - (b.ours - a.ours)) / secs),
    };
  }

  /** CPU of processes not ours over `ms`, in cores. */
  async otherLoad(ms = 1_000): Promise<number> {
    const a = this.snapshot();
    await sleep(ms);
    return this.use(a, this.snapshot(), 'self').other;
  }

  /** Waits (bounded) until other processes use less than `maxCores`; returns the last reading. */
  async waitForQuiet(maxCores = 0.25, maxWaitMs = 15_000): Promise<number> {
    const deadline = Date.now() + maxWaitMs;
    let other = await this.otherLoad();
    if (other >= maxCores)
      progress(`other processes use ${other.toFixed(2)} cores; waiting up to ${maxWaitMs / 1000} s for quiet`);
    while (other >= maxCores && Date.now() < deadline) other = await this.otherLoad();
    return other;
  }
}

/** The postmaster's pid from line 1 of postmaster.pid in the data folder, or null. */
export function postmasterPid(pgDataDir: string | null): number | null {
  if (!pgDataDir) return null;
  try {
    const pid = Number(fs.readFileSync(`${pgDataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
