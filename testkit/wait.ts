// Polling for a condition in tests, benchmarks and the demo (any namespace: it only runs `pred`).
// Kept apart from cluster.ts so that unit tests can wait without loading the cluster harness.

/** Polls `pred` every `everyMs` until it is true; returns the elapsed ms, throws after `timeoutMs`. */
export async function waitFor(what: string, pred: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 50): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await pred()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
