// A kubelet node's own cgroup root in every cgroup v1 hierarchy of the machine (the kubelet refuses
// a cgroupRoot with missing paths), and its removal: kill what runs inside, rmdir depth-first.
// Works on the machine's cgroup file system; touches no other cgroup than the root it made.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_FS = '/sys/fs/cgroup';

/** The mounted v1 hierarchies (cpu, cpuacct, memory, systemd, ...), without the v2 `unified` one. */
export function v1Hierarchies(): string[] {
  if (!existsSync(CGROUP_FS)) return [];
  return readdirSync(CGROUP_FS).filter((h) => {
    const p = join(CGROUP_FS, h);
    return h !== 'unified' && statSync(p).isDirectory() && existsSync(join(p, 'cgroup.procs'));
  });
}

/** Creates `/<name>` in every v1 hierarchy (cpuset gets its parent's cpus and mems, else it holds no task). */
export function setupCgroupRoot(name: string): void {
  for (const h of v1Hierarchies()) {
    const dir = join(CGROUP_FS, h, name);
    mkdirSync(dir, { recursive: true });
    if (h === 'cpuset') for (const f of ['cpuset.cpus', 'cpuset.mems']) copyFileSync(join(CGROUP_FS, h, f), join(dir, f));
  }
}

/** Every hierarchy mounted under /sys/fs/cgroup, v2's `unified` included (runc mirrors pod cgroups there in hybrid mode). */
function allHierarchies(): string[] {
  if (!existsSync(CGROUP_FS)) return [];
  return readdirSync(CGROUP_FS).filter((h) => existsSync(join(CGROUP_FS, h, 'cgroup.procs')));
}

/** Every directory of the root's tree in every hierarchy (v2's too), parents before children. */
export function cgroupTree(name: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return; // removed meanwhile (containerd or the kubelet deleting a pod's cgroup as we walk)
    }
    out.push(d);
    for (const e of entries) if (e.isDirectory()) walk(join(d, e.name));
  };
  for (const h of allHierarchies()) {
    const top = join(CGROUP_FS, h, name);
    if (existsSync(top)) walk(top);
  }
  return out;
}

/** PIDs in any cgroup of the root's tree. */
export function cgroupPids(name: string): number[] {
  const pids = new Set<number>();
  for (const d of cgroupTree(name)) {
    try {
      for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l !== '') pids.add(Number(l));
    } catch {
      /* removed meanwhile */
    }
  }
  return [...pids];
}

/** SIGKILLs what runs in the root's tree and removes it depth-first, retrying while processes are reaped. */
export function teardownCgroupRoot(name: string): void {
  for (let attempt = 0; attempt < 50; attempt++) {
    const dirs = cgroupTree(name);
    if (dirs.length === 0) return;
    for (const pid of cgroupPids(name)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    for (const d of dirs.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        /* busy until its processes are reaped: retried */
      }
    }
    spawnSync('sleep', ['0.1']);
  }
}
