// weftd's memory settings (docs/weftd.md, "Memory"): V8 flags set at run time, for this process only,
// so that every way weftd is started (dist/bin/weftd, `weft weftd`, the unit, the DaemonSet) gets them
// without a second process; measured with `npm run bench -- weftd` and `services-peers`.

/** A flag the user set on node's command line or in NODE_OPTIONS: theirs wins. */
function userSet(execArgv: readonly string[], nodeOptions: string, re: RegExp): boolean {
  return execArgv.some((a) => re.test(a)) || nodeOptions.split(/\s+/).some((a) => re.test(a));
}

const TURBOFAN = /^--(turbofan|opt)$/;
const YOUNG = /^--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)(=|$)/;
const OLD_GROWTH = /^--heap-growing-percent(=|$)/;

/**
 * The flags set before any code runs (pure, for the tests):
 * - `--no-turbofan`: the interpreter and Sparkplug's baseline code remain. TurboFan's first
 *   optimisation touches about 4 MB of node's own code pages (idle RSS 53 -> 49 MiB with the file
 *   store) and its code raises the peak at 1,000 peers by 10-13 MiB. The 1,000-lease burst took no
 *   more CPU; the file store's 1 s re-scans of 1,000 leases took 1.6x (4.5% of a core, not 2.8%).
 * - `--semi-space-growth-factor=1`: the young generation keeps the semi-spaces it has when this
 *   runs (2 MiB, grown while the bundle compiled) instead of growing to 16 MiB ones. V8 clamps this flag to 2 when the heap is configured, so only
 *   a run-time setting keeps it at 1; V8 reads it each time the young generation would grow. Peak
 *   RSS at 5,000 kube peers 107-116 -> 90-106 MiB for the same CPU (objects promoted early then
 *   wait in the old generation for its next collection, hence the next flag).
 * - `--heap-growing-percent=20`: the old generation's limit grows to 1.2x what survived the last
 *   full collection instead of V8's dynamic 1.1-4x. With the cap above: 5,000 kube peers 76-80 MiB;
 *   alone, 10,000 Services 220 -> 196 MiB, CPU per Service change unchanged.
 */
export function memoryFlags(execArgv: readonly string[], nodeOptions: string): string[] {
  const flags: string[] = [];
  if (!userSet(execArgv, nodeOptions, TURBOFAN)) flags.push('--no-turbofan');
  if (!userSet(execArgv, nodeOptions, YOUNG)) flags.push('--semi-space-growth-factor=1');
  if (!userSet(execArgv, nodeOptions, OLD_GROWTH)) flags.push('--heap-growing-percent=20');
  return flags;
}

/**
 * With a kube controller (--service-proxy, --network-policy) the young generation grows as V8's
 * default: at 10,000 Services a 2 MiB young generation promoted the cold sync's short-lived objects,
 * and peak RSS went 220 -> 256 MiB and CPU per Service change 7 -> 50 ms. Empty unless weftd capped it.
 */
export function controllerMemoryFlags(o: { serviceProxy?: unknown; networkPolicy?: unknown }, applied: readonly string[]): string[] {
  const controllers = o.serviceProxy !== undefined || o.networkPolicy !== undefined;
  return controllers && applied.includes('--semi-space-growth-factor=1') ? ['--semi-space-growth-factor=2'] : [];
}

/** Sets `flags` in this process's V8 (they apply from the next allocation on). */
export function setV8Flags(flags: readonly string[]): void {
  if (flags.length === 0) return;
  process.getBuiltinModule('node:v8').setFlagsFromString(flags.join(' '));
}

/** Sets memoryFlags() before any code gets hot; returns what it set. `node --turbofan weftd ...` keeps TurboFan. */
export function setMemoryFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): string[] {
  const flags = memoryFlags(execArgv, nodeOptions);
  setV8Flags(flags);
  return flags;
}

/**
 * The young generation's cap with a kube controller (both semi-spaces). 10,000 Services in process
 * (scripts/bench/services-memory-weftd.ts, bundled), 2026-12-08, three interleaved pairs at load 2-4:
 * 8 MiB against 16, the cold sync's CPU 11.1-13.3 s against 11.5-12.7 s, its peak RSS 104-107 against
 * 110-112 MiB, the 5-minute resync's 107-109 against 118-122 MiB, CPU per Service change 3.6-4.4 ms
 * against 3.8-4.1. weftd itself through services-peers (real API objects, two runs, load 2-3): peak
 * 103.2-104.9 against 109.0-111.3 MiB, but cold start CPU 15.6-16.4 against 11.6-13.5 s and 8-9
 * against 6 ms per change. (Before the count tables and the listing were packed, 8 MiB gave no lower
 * peak than 16; 4 MiB, no growth, costs 40% more CPU.)
 */
export const CONTROLLER_YOUNG_MIB = 8;

/** The young generation's largest size (both semi-spaces, bytes) while paced; 0: not capped. */
let youngCap = 0;
let youngGrowing = true;

/**
 * With a kube controller, lets the young generation grow as V8's default (factor 2) but not past
 * `mib` (both semi-spaces). V8 sets its largest size when the heap is configured (16 MiB semi-spaces:
 * 32 MiB of RSS at 10,000 Services), so a run-time cap is held by the growth factor: off from here,
 * and turned on by paceYoungGeneration() only while one more doubling stays within the cap. With
 * growth on from main's start and off only at a pace that found the cap reached, weftd's young
 * generation was at 32 MiB 1.3 s after start (its first full collection, the lease source starting),
 * twice the cap of the time (16 MiB), for good.
 */
export function capYoungGeneration(mib: number): void {
  youngCap = mib * 1048576;
  youngGrowing = false;
  process.getBuiltinModule('node:v8').setFlagsFromString('--semi-space-growth-factor=1');
}

/**
 * Checks the young generation against the cap (a few µs): called between the pieces of a long
 * synchronous task (a list page, a full sync's batch), where it may grow. Nothing without a cap.
 */
export function paceYoungGeneration(): void {
  if (youngCap === 0) return;
  const v8 = process.getBuiltinModule('node:v8');
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  const grow = young * 2 <= youngCap;
  if (grow === youngGrowing) return;
  youngGrowing = grow;
  v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
}
