// What a torn-down kube cluster may have left on the machine, counted from the root namespace's
// view (read only): namespaces of its prefix, its cgroup roots, mounts under its directory, and
// processes (zombies aside) whose command line names its directory or whose cgroup is one of its roots.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cgroupTree } from './cgroups.ts';

/** Leftovers by kind; each list empty after a clean teardown. */
export interface Census {
  netns: string[];
  cgroups: string[];
  mounts: string[];
  processes: string[];
}

/** Counts what is left of a cluster with namespace prefix `prefix`, directory `dir` and cgroup roots `cgroupNames`. */
export function takeCensus(prefix: string, dir: string, cgroupNames: readonly string[]): Census {
  let list = '';
  try {
    list = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  } catch {
    /* no namespaces */
  }
  const netns = list.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith(`${prefix}-`));
  const cgroups = cgroupNames.flatMap((n) => cgroupTree(n));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(dir));
  const processes: string[] = [];
  for (const p of readdirSync('/proc').filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)) {
    try {
      // A zombie (killed, not yet reaped by its new parent) holds nothing but its pid.
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cg = readFileSync(`/proc/${p}/cgroup`, 'utf8');
      if (cmd.includes(dir) || cgroupNames.some((n) => cg.includes(`/${n}`))) processes.push(`${p} ${cmd.slice(0, 120)}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return { netns, cgroups, mounts, processes };
}

/** "0 netns, 0 cgroups, 0 mounts, 0 processes" */
export function formatCensus(c: Census): string {
  return `${c.netns.length} netns, ${c.cgroups.length} cgroups, ${c.mounts.length} mounts, ${c.processes.length} processes`;
}
