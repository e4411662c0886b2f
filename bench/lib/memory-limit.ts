// A memory limit for one child of the bench: a cgroup of its own, to measure the service as it
// runs on a small host or in a container with a limit. Node sizes V8's heap from the memory it is
// given (the cgroup's limit when there is one, else the host's), so the same code peaks higher on
// a large host with nothing else to use its memory. Needs a writable memory cgroup (cgroup v1's
// memory hierarchy or cgroup v2 with the memory controller), as root on the build machines.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  limitMb: number;
  /** The command and arguments that start `cmd` inside the cgroup (same pid: `exec`). */
  wrap(cmd: string, args: string[]): { cmd: string; args: string[] };
  /** V8's heap limit for a Node started inside the cgroup, in MB. */
  heapLimitMb(): number;
  /** Removes the cgroup; call once its processes have exited. */
  remove(): void;
}

function ownMemoryCgroup(): { dir: string; limitFile: string } | string {
  const lines = fs.readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('memory'));
  if (v1 && fs.existsSync('/sys/fs/cgroup/memory')) {
    return { dir: path.join('/sys/fs/cgroup/memory', v1[2] ?? '/'), limitFile: 'memory.limit_in_bytes' };
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  const controllers = '/sys/fs/cgroup/cgroup.controllers';
  if (v2 && fs.existsSync(controllers) && fs.readFileSync(controllers, 'utf8').split(/\s+/).includes('memory')) {
    const dir = path.join('/sys/fs/cgroup', v2.slice(3));
    try {
      fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+memory');
    } catch (err) {
      return `cannot enable the memory controller under ${dir}: ${(err as Error).message}`;
    }
    return { dir, limitFile: 'memory.max' };
  }
  return 'no memory cgroup (v1 or v2) on this machine';
}

/** A new cgroup limited to `limitMb`, or why none could be made. */
export function createMemoryCgroup(limitMb: number): MemoryCgroup | { unavailable: string } {
  const own = ownMemoryCgroup();
  if (typeof own === 'string') return { unavailable: own };
  const dir = path.join(own.dir, `leadintake-bench-${process.pid}`);
  try {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, own.limitFile), String(limitMb * 1024 * 1024));
  } catch (err) {
    try {
      fs.rmdirSync(dir);
    } catch {}
    return { unavailable: `cannot create a memory cgroup under ${own.dir}: ${(err as Error).message}` };
  }
  const procs = path.join(dir, 'cgroup.procs');
  const wrap = (cmd: string, args: string[]) => ({
    cmd: '/bin/sh',
    args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, cmd, ...args],
  });
  return {
    limitMb,
    wrap,
    heapLimitMb() {
      const w = wrap(process.execPath, ['-p', 'require("node:v8").getHeapStatistics().heap_size_limit']);
      return Number(execFileSync(w.cmd, w.args, { encoding: 'utf8' }).trim()) / 1024 / 1024;
    },
    remove() {
      fs.rmdirSync(dir);
    },
  };
}
