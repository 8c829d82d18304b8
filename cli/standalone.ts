// Entry point of the standalone executable dist/sea/weft (a Node single executable application):
// runs the plugin, weftd or the weft CLI its name asks for (see cli/dispatch.ts). Wiring only.
import { chooseEntry } from './dispatch.ts';
import { SEA_ENTRIES } from './sea-entries.ts';

const chosen = chooseEntry(process.argv0, process.execPath, process.argv, new Set(Object.keys(SEA_ENTRIES)));
const run = SEA_ENTRIES[chosen.name];
if (run === undefined) {
  process.stderr.write(`weft: no executable named ${JSON.stringify(chosen.name)} in this build\n`);
  process.exit(1);
}
process.argv = chosen.argv;
run();
