// Main script of the standalone executable in its "run-cache" start-up mode (scripts/build/sea.ts):
// each executable's bundle body (the one dist/bin/<name> runs) travels as the SEA asset
// `body-<name>`; this picks one by the name the file was started by (dispatch.ts) and runs it
// through V8's code cache kept per executable and command in the addon's private directory
// (lib/sys/code-cache.ts), written by the first run of each, so it holds every function that run
// compiled. WEFT_SEA_BODIES (name -> sha256 of the body) is defined at build time. Wiring only.
import { getAsset } from 'node:sea';
import { runCachedSource } from '../../lib/sys/code-cache.ts';
import { chooseEntry } from './dispatch.ts';

declare const WEFT_SEA_BODIES: Record<string, string>;

const chosen = chooseEntry(process.argv0, process.execPath, process.argv, new Set(Object.keys(WEFT_SEA_BODIES)));
process.argv = chosen.argv;
runCachedSource(getAsset(`body-${chosen.name}`, 'utf8'), process.execPath, `sea-${chosen.name}`, WEFT_SEA_BODIES[chosen.name] ?? '', module, require);
