// Which test process owns each namespace it made, recorded under /run (root namespace's tmpfs, gone
// at reboot): a namespace whose name carries no pid (a topology's `wf1a2b-n1`) is still found by the
// stale sweep once its owner died without running any exit hook (SIGKILL, an OOM kill).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OWNERS_DIR = '/run/weft-test-netns';

/** The kernel's start time of `pid` (field 22 of /proc/<pid>/stat), so a reused pid is not taken for the owner. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Records this process as the owner of namespace `name` (root netns, a file under /run); best effort. */
export function markOwned(name: string): void {
  try {
    mkdirSync(OWNERS_DIR, { recursive: true });
    writeFileSync(join(OWNERS_DIR, name), `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`);
  } catch {
    // not root, or /run read-only: the pid-named sweep still covers createTestNetns' names
  }
}

/** Forgets the owner of `name` (deleted, or handed over by releaseNetns); best effort. */
export function unmarkOwned(name: string): void {
  rmSync(join(OWNERS_DIR, name), { force: true });
}

/** True when the owner record `text` ("<pid> <start time>") names a process that still runs. */
export function ownerAlive(text: string): boolean {
  const [pidText = '', start = ''] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const now = startTimeOf(pid);
  return now !== undefined && (start === '' || now === start);
}

/** Namespaces whose recorded owner no longer runs (their records are removed by unmarkOwned after deletion). */
export function namespacesOfDeadOwners(): string[] {
  let names: string[];
  try {
    names = readdirSync(OWNERS_DIR);
  } catch {
    return [];
  }
  return names.filter((n) => {
    try {
      return !ownerAlive(readFileSync(join(OWNERS_DIR, n), 'utf8'));
    } catch {
      return false;
    }
  });
}
