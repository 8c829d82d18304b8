// A run's word to the code-cache loader (lib/sys/code-cache.ts): "this run took a short path, do not
// make the code cache of this executable and command from it". A no-op DEL (a container never added,
// or deleted already) runs a few functions of the DEL path, and a cache made from it would leave every
// later, real DEL compiling the rest at each start (flannel's DEL: a 117 kB cache against 263 kB, and
// about 35 M more instructions per DEL, 1.72x `node -e 0` against 1.27x). Shared through the global
// object: the loader and the bundle body each carry their own copy of this module. Any namespace.

const KEY = Symbol.for('weft.codeCache.shortRun');
type Holder = { [KEY]?: boolean };

/** Marks this run as a short path: its exit writes no code cache and leaves no mark. */
export function markShortRun(): void {
  (globalThis as Holder)[KEY] = true;
}

/** True when markShortRun() was called in this process. */
export function isShortRun(): boolean {
  return (globalThis as Holder)[KEY] === true;
}
