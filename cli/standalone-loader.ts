// Main script of the standalone executable in its "run-cache" start-up mode: the bundle
// (cli/standalone.ts) travels as the SEA asset `weft-body`, and runs through V8's code cache kept
// per executable and command in the addon's private directory (lib/sys/code-cache.ts), written by
// the first run of each, so it holds every function that run compiled. WEFT_BODY_SHA256 and
// WEFT_SEA_NAMES are defined at build time (scripts/build/sea.ts). Wiring only.
import { getAsset } from 'node:sea';
import { runCachedSource } from '../lib/sys/code-cache.ts';
import { chooseEntry } from './dispatch.ts';

declare const WEFT_BODY_SHA256: string;
declare const WEFT_SEA_NAMES: string[];

const { name } = chooseEntry(process.argv0, process.execPath, process.argv, new Set(WEFT_SEA_NAMES));
runCachedSource(getAsset('weft-body', 'utf8'), process.execPath, `sea-${name}`, WEFT_BODY_SHA256, module, require);
