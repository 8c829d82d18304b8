// Main script of the standalone executable in its "snapshot-cache" start-up mode (scripts/build/sea.ts):
// run once at build time under node's snapshot builder, it compiles the Node functions a plugin
// calls (warm.ts) and names the run-cache start (loader.ts's work: the body asset by name, through
// lib/sys/code-cache.ts) as what every start from the snapshot runs. Nothing here reads the
// environment, argv or stdin before deserialisation. Wiring only.
import { getAsset } from 'node:sea';
import { startupSnapshot } from 'node:v8';
import { runCachedSource } from '../../lib/sys/code-cache.ts';
import { chooseEntry } from './dispatch.ts';
import { warmNodeInternals } from './warm.ts';

declare const WEFT_SEA_BODIES: Record<string, string>;

warmNodeInternals();
startupSnapshot.setDeserializeMainFunction(() => {
  const chosen = chooseEntry(process.argv0, process.execPath, process.argv, new Set(Object.keys(WEFT_SEA_BODIES)));
  process.argv = chosen.argv;
  const mod = { exports: {} } as NodeJS.Module;
  runCachedSource(getAsset(`body-${chosen.name}`, 'utf8'), process.execPath, `sea-${chosen.name}`, WEFT_SEA_BODIES[chosen.name] ?? '', mod, require);
});
