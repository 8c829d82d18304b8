// The values ADD replaced, saved before it changes anything: `<dataDir>/<containerID>_<ifname>.json`,
// the reference's file name and keys (mac, promisc, mtu, allmulti, txQLen), plus `sysctl` (old values)
// and `network` (for GC), which the reference ignores. DEL restores from it and removes it.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../lib/fs/atomic-write.ts';

/** What DEL puts back; a key is present only when ADD changed that value. */
export interface SavedState {
  network?: string;
  mac?: string;
  promisc?: boolean;
  mtu?: number;
  allmulti?: boolean;
  txQLen?: number;
  /** slash name -> value before ADD. */
  sysctl?: Record<string, string>;
}

// containerID and ifname were validated by the skeleton (no '/', no leading '.'); checked again here
// because the name becomes a path.
const FILE_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*_[^/\0]{1,15}\.json$/;

/** The state file of an attachment; throws on a name that could leave the directory. */
export function statePath(dataDir: string, containerId: string, ifName: string): string {
  const file = `${containerId}_${ifName}.json`;
  if (!FILE_RE.test(file) || ifName === '.' || ifName === '..') throw new TypeError(`invalid tuning state file name ${JSON.stringify(file)}`);
  return join(dataDir, file);
}

/** Parses a state file's text; null when it is not a JSON object. Pure. */
export function parseState(text: string): SavedState | null {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as SavedState) : null;
  } catch {
    return null;
  }
}

/** The saved state; null when there is none (or it is unreadable). */
export function readState(path: string): SavedState | null {
  try {
    return parseState(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** Writes the state atomically (mode 0600, dir 0700); no fsync: the default dir is a tmpfs, gone with the pods at reboot. */
export function writeState(path: string, dir: string, s: SavedState): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileAtomicSync(path, JSON.stringify(s), { mode: 0o600, exactMode: true, hidden: true, fsync: false });
}

/** Removes the state file; absent is fine. */
export function removeState(path: string): void {
  rmSync(path, { force: true });
}

/** State files in `dir` with their parsed content (GC); empty when the dir is absent. */
export function listStates(dir: string): { file: string; state: SavedState | null }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).map((file) => ({ file, state: readState(join(dir, file)) }));
}
