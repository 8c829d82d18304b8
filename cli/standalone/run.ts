// The standalone executable's start: picks the executable its name asks for (dispatch.ts) and runs it.
import { chooseEntry } from './dispatch.ts';
import { SEA_ENTRIES } from './sea-entries.ts';

/** Runs the plugin, weftd or weft CLI named by process.argv0 / execPath (or `weft <name>`). */
export function runStandalone(): void {
  const chosen = chooseEntry(process.argv0, process.execPath, process.argv, new Set(Object.keys(SEA_ENTRIES)));
  const entry = SEA_ENTRIES[chosen.name];
  if (entry === undefined) {
    process.stderr.write(`weft: no executable named ${JSON.stringify(chosen.name)} in this build\n`);
    process.exit(1);
  }
  process.argv = chosen.argv;
  entry.run();
}
