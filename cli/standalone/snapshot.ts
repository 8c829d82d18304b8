// Entry point of the standalone executable when built with a V8 start-up snapshot: run once at build
// time, it loads the modules of every entry that has a `warm` (the plugins) into the heap that the
// snapshot saves, and names runStandalone as what a start from the snapshot runs. The native addon
// is never loaded here (lib/sys loads it on first use, after deserialisation). Wiring only.
import { startupSnapshot } from 'node:v8';
import { SEA_ENTRIES } from './sea-entries.ts';
import { runStandalone } from './run.ts';

for (const entry of Object.values(SEA_ENTRIES)) entry.warm?.();
startupSnapshot.setDeserializeMainFunction(runStandalone);
