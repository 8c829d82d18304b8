// /proc readings of the benchmark's daemons (run in any namespace: /proc is the machine's): peak and
// current RSS, CPU time, and finding a daemon's pid by its command line.
import { readFileSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';

/** A /proc/PID/status memory line in MiB: VmHWM (peak RSS) or VmRSS (now). */
export function statusMib(pid: number | undefined, key: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return NaN;
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time (user + system, ms) a process has used so far, from /proc/PID/stat (clock ticks of 10 ms). */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/** The pid of the process whose argv[0] is named `exe` and whose command line mentions `marker` (a run's temp dir). */
export function findPid(exe: string, marker: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (basename(argv[0] ?? '') === exe && argv.some((a) => a.includes(marker))) return Number(d);
  }
  return undefined;
}
