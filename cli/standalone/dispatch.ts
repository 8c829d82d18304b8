// Which executable the standalone file (dist/sea/weft) runs: decided from the name it was started by,
// so that one file hard-linked (or symlinked) under every plugin name serves them all.
import { basename } from 'node:path';

/** The chosen executable and the argv its code must see (process.argv layout: [exe, exe, ...args]). */
export interface Dispatch {
  name: string;
  argv: string[];
}

/**
 * The entry to run: the basename of argv0 (a symlink keeps its own name there), else of execPath
 * (a hard link started through a wrapper that rewrote argv0), else `weft`; `weft <name> args...`
 * runs entry `name` with the remaining args. `names` is the dispatch table's key set.
 */
export function chooseEntry(argv0: string, execPath: string, argv: readonly string[], names: ReadonlySet<string>): Dispatch {
  const byName = [basename(argv0), basename(execPath)].find((n) => n !== 'weft' && names.has(n));
  if (byName !== undefined) return { name: byName, argv: [...argv] };
  const sub = argv[2];
  if (sub !== undefined && sub !== 'weft' && names.has(sub)) return { name: sub, argv: [argv[0] ?? execPath, argv[1] ?? execPath, ...argv.slice(3)] };
  return { name: 'weft', argv: [...argv] };
}
