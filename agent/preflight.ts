// Checks of weftd's start that need the node but write nothing (run in weftd's netns and mount
// namespace, before the lease store is opened): a flag that names a path weftd cannot write would
// otherwise be found out after the lease was taken, leaving it behind in a store other nodes read.
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (e) {
    // ENOTDIR: an ancestor is a file, which the walk up reports.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

/**
 * Throws unless subnet.env (and the VTEP records beside it) can be written at `path`: an existing
 * target must be a regular file, and the nearest existing ancestor a directory weftd may write in
 * (writeSubnetEnv creates the missing ones, as flanneld does).
 */
export function checkSubnetFileWritable(path: string): void {
  const flag = `--subnet-file ${JSON.stringify(path)}`;
  const st = statOrNull(path);
  if (st !== null && !st.isFile()) throw new Error(`${flag} exists and is not a regular file`);
  let dir = dirname(path);
  for (let d = statOrNull(dir); d === null; d = statOrNull(dir)) {
    if (dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  const d = statOrNull(dir);
  if (d === null || !d.isDirectory()) throw new Error(`${flag}: ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw new Error(`${flag}: ${dir} is not writable by weftd`);
  }
}
