// weftd's memory settings (docs/weftd.md, "Memory"): V8 flags set at start, for this process only;
// measured with `npm run bench` (idle RSS per lease store, RSS at 1,000 peers).

/**
 * Turns TurboFan off (the interpreter and Sparkplug's baseline code remain). Its first optimisation
 * touches about 4 MB of node's own code pages (idle RSS 53 -> 49 MiB with the file store) and its code
 * raises the peak at 1,000 peers by 10-13 MiB. Measured on the 1,000-lease burst, CPU was no higher
 * (no compile work); the file store's steady 1 s re-scans of 1,000 leases took 1.6x the CPU (4.5% of
 * a core instead of 2.8%). Must run before any code gets hot. `node --turbofan weftd ...` keeps it on.
 */
export function setMemoryFlags(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => /^--(turbofan|opt)$/.test(a))) return;
  process.getBuiltinModule('node:v8').setFlagsFromString('--no-turbofan');
}
