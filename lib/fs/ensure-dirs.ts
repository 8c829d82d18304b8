// Directory creation that reports what it created, so an installer can record it and remove exactly
// that on uninstall. Any netns.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Creates `dir` and its missing parents; returns the directories it created, outermost first. */
export function ensureDirs(dir: string, mode = 0o755): string[] {
  const missing: string[] = [];
  for (let d = dir; !exists(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) mkdirSync(d, { mode });
  return missing;
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}
