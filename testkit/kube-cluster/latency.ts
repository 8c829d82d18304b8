// Pod start latency as users feel it: from the request that creates the pods (a Deployment of N) to
// each pod first seen Running and Ready, polling the API every 100 ms (the API's own timestamps have
// one-second resolution). Runs kubectl and curl in the control plane's namespace.
import type { KubeCluster } from './cluster.ts';
import { httpdDeployment, listPods } from './workload.ts';

/** Milliseconds from the create request to Running+Ready, one per pod, sorted. */
export async function podStartLatencies(k: KubeCluster, namespace: string, app: string, replicas: number, image: string, timeoutMs = 300_000): Promise<number[]> {
  const t0 = Date.now();
  await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment(app, namespace, replicas, image)));
  const seen = new Map<string, number>();
  while (seen.size < replicas) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${seen.size}/${replicas} pods Running and Ready after ${timeoutMs} ms`);
    for (const p of await listPods(k, namespace, app)) if (p.phase === 'Running' && p.ready && !seen.has(p.name)) seen.set(p.name, Date.now() - t0);
    await new Promise((res) => setTimeout(res, 100));
  }
  return [...seen.values()].sort((a, b) => a - b);
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
