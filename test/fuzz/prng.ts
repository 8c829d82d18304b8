// A small seeded PRNG (mulberry32) so every fuzz case can be regenerated from (seed, index): the
// suite prints the seed, and FUZZ_SEED=<seed> reruns exactly the same cases.

/** A deterministic random source. */
export interface Rng {
  /** The seed this generator started from (printed with every failure). */
  readonly seed: number;
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
  /** A child generator for case `i`, independent of how many draws earlier cases made. */
  fork(i: number): Rng;
}

// mulberry32: 32-bit state, full period 2^32, good enough to spread mutations (not for crypto).
function mulberry32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A generator from `seed` (any 32-bit integer). */
export function makeRng(seed: number): Rng {
  const next = mulberry32(seed);
  const rng: Rng = {
    seed,
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    chance: (p) => next() < p,
    // Mix the index into the seed (golden-ratio multiplier) so neighbouring cases differ fully.
    fork: (i) => makeRng((Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(i + 1, 0x9e3779b1)) >>> 0),
  };
  return rng;
}

/** The seed of this run: FUZZ_SEED when set (to reproduce a failure), else fresh. */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const fixed = env['FUZZ_SEED'];
  if (fixed !== undefined && fixed !== '') {
    const n = Number(fixed);
    if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(fixed)}`);
    return n >>> 0;
  }
  return (Date.now() ^ (process.pid << 8)) >>> 0;
}
