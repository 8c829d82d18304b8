// Workloads of the kube cluster's tests and demo, scheduled by Kubernetes: a Deployment of busybox
// httpd pods spread over the nodes with HTTP readiness and liveness probes (kubelet probes them from
// the node's namespace through the CNI bridge), pod listings, and the pod-to-pod / node-to-pod
// reachability matrix (pods' side by `kubectl exec`, nodes' side in each node namespace).
import { nsExec } from '../topology.ts';
import type { KubeCluster } from './cluster.ts';
import type { KubeNode } from './node.ts';

/** A pod as the tests look at it. */
export interface PodView {
  name: string;
  node: string;
  ip: string;
  phase: string;
  ready: boolean;
  restarts: number;
  created: string;
}

/** A Deployment of `replicas` busybox httpd pods labelled app=`name`, at most one apart per node. */
export function httpdDeployment(name: string, namespace: string, replicas: number, image: string): Record<string, unknown> {
  const probe = { httpGet: { path: '/index.html', port: 80 }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } }],
          containers: [{
            name: 'httpd', image, imagePullPolicy: 'Never', command: ['/bin/httpd', '-f', '-p', '80', '-h', '/www'],
            ports: [{ containerPort: 80 }], readinessProbe: probe, livenessProbe: { ...probe, initialDelaySeconds: 1 },
          }],
        },
      },
    },
  };
}

/** The pods labelled app=`app` in `namespace`. */
export async function listPods(k: KubeCluster, namespace: string, app: string): Promise<PodView[]> {
  const list = await k.control.call<{ items: Array<{ metadata: { name: string; creationTimestamp: string; deletionTimestamp?: string };
    spec: { nodeName?: string }; status: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }>;
      containerStatuses?: Array<{ restartCount: number }> } }> }>('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=app%3D${app}`);
  return list.items.map((p) => ({
    name: p.metadata.name, node: p.spec.nodeName ?? '', ip: p.status.podIP ?? '', phase: p.metadata.deletionTimestamp ? 'Terminating' : p.status.phase ?? '',
    ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    restarts: (p.status.containerStatuses ?? []).reduce((s, c) => s + c.restartCount, 0), created: p.metadata.creationTimestamp,
  }));
}

/** One row of the reachability matrix: from a pod or node, the targets it fetched the page from. */
export interface ReachRow {
  from: string;
  ok: string[];
  failed: string[];
  /** Why the source could not be asked at all (kubectl exec failed), when it could not. */
  error?: string;
}

/**
 * Each of `sources` (every pod by default) fetches http://<ip>/index.html of every pod of `pods` (one
 * `kubectl exec` per source); each node of `nodes` (every node by default) does the same from its namespace.
 */
export async function reachability(k: KubeCluster, namespace: string, pods: readonly PodView[], sources: readonly PodView[] = pods,
  nodes: readonly KubeNode[] = k.nodes): Promise<ReachRow[]> {
  const rows: ReachRow[] = [];
  // The image's busybox (static, glibc) has no grep, and its wget segfaults resolving a URL: nc speaks HTTP/1.0.
  const get = (ip: string): string => `printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${ip} 80`;
  const script = pods.map((p) => `case "$(${get(p.ip)})" in *'200 OK'*weft*) echo ok ${p.ip};; *) echo failed ${p.ip};; esac`).join('; ');
  for (const p of sources) {
    const r = await k.kubectl(['-n', namespace, 'exec', p.name, '--', 'sh', '-c', script]);
    const lines = r.stdout.split('\n');
    const ok = pods.filter((t) => lines.includes(`ok ${t.ip}`)).map((t) => t.ip);
    rows.push({ from: `${p.name} (${p.ip})`, ok, failed: pods.map((t) => t.ip).filter((ip) => !ok.includes(ip)),
      ...(r.code !== 0 ? { error: `kubectl exec exited ${r.code}: ${r.stderr.trim().slice(0, 300)}` } : {}) });
  }
  for (const n of nodes) {
    const ok: string[] = [];
    for (const t of pods) {
      const r = await nsExec(n.netns, ['curl', '-fsS', '--max-time', '3', `http://${t.ip}/index.html`]);
      if (r.code === 0 && r.stdout.includes('weft')) ok.push(t.ip);
    }
    rows.push({ from: `node ${n.name}`, ok, failed: pods.map((t) => t.ip).filter((ip) => !ok.includes(ip)) });
  }
  return rows;
}

/** The matrix as text: one line per source, a column per target pod (o reached, x not). */
export function formatReachability(rows: readonly ReachRow[], pods: readonly PodView[]): string {
  const w = Math.max(...rows.map((r) => r.from.length));
  const head = `${' '.repeat(w)}  ${pods.map((_, i) => `p${i + 1}`.padStart(3)).join('')}`;
  return [head, ...rows.map((r) => `${r.from.padEnd(w)}  ${pods.map((p) => (r.ok.includes(p.ip) ? 'o' : 'x').padStart(3)).join('')}`)].join('\n');
}
