// The rendered delegate config kept under dataDir/<containerID> between ADD and DEL (flannel's
// layout): DEL replays exactly what ADD used even when subnet.env changed or is gone since.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ioFailure } from '../cni/errors.ts';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { scratchName } from './config.ts';
import { isSysError } from '../errno/errno.ts';

/** Path of the stored delegate config for a container. */
export function scratchPath(dataDir: string, containerId: string): string {
  return join(dataDir, scratchName(containerId));
}

/** Stores the delegate config (atomic: temp file + rename, mode 0600 as it may hold runtime args). */
export function saveDelegateConf(dataDir: string, containerId: string, conf: Record<string, unknown>): void {
  const path = scratchPath(dataDir, containerId);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileAtomicSync(path, JSON.stringify(conf), { mode: 0o600 });
  } catch (e) {
    throw ioFailure(`cannot store the delegate config under ${dataDir}`, (e as Error).message, e);
  }
}

/** The stored delegate config bytes, or null when there is none (DEL of an unknown container). */
export function loadDelegateConf(dataDir: string, containerId: string): Buffer | null {
  try {
    return readFileSync(scratchPath(dataDir, containerId));
  } catch (e) {
    if (isSysError(e, 'ENOENT')) return null;
    throw ioFailure(`cannot read the delegate config of ${containerId}`, (e as Error).message, e);
  }
}

/** Removes the stored config; succeeds when it is already gone. */
export function removeDelegateConf(dataDir: string, containerId: string): void {
  rmSync(scratchPath(dataDir, containerId), { force: true });
}
