// Pod start latency as users feel it: from the request that creates the pods (a Deployment of N) to
// each pod first seen Running and Ready, polling the API every 100 ms (the API's own timestamps have
// one-second resolution). Runs kubectl and curl in the control plane's namespace.
import type { KubeCluster } from './cluster.ts';
import { httpdDeployment, listPods } from './workload.ts';

/** Milliseconds from the create request, one per pod, sorted: to phase Running (container started) and to Ready (readiness probe passed). */
export interface PodStartTimes {
  running: number[];
  ready: number[];
}

/** Creates a Deployment of `replicas` httpd pods and times each pod's start (see PodStartTimes). */
export async function podStartLatencies(k: KubeCluster, namespace: string, app: string, replicas: number, image: string, timeoutMs = 300_000): Promise<PodStartTimes> {
  const t0 = Date.now();
  await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment(app, namespace, replicas, image)));
  const running = new Map<string, number>();
  const ready = new Map<string, number>();
  while (ready.size < replicas) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${ready.size}/${replicas} pods Running and Ready after ${timeoutMs} ms`);
    for (const p of await listPods(k, namespace, app)) {
      if (p.phase === 'Running' && !running.has(p.name)) running.set(p.name, Date.now() - t0);
      if (p.phase === 'Running' && p.ready && !ready.has(p.name)) ready.set(p.name, Date.now() - t0);
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  const sorted = (m: Map<string, number>): number[] => [...m.values()].sort((a, b) => a - b);
  return { running: sorted(running), ready: sorted(ready) };
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
