// Cluster DNS for the kit's cluster, as kubeadm's CoreDNS addon provides it: CoreDNS v1.14.0 built
// from the Go module proxy (scripts/coredns-setup.sh, image by scripts/coredns-image.sh, never pulled)
// as Deployment `coredns` behind Service `kube-dns` (kube-system, ClusterIP CLUSTER_DNS_IP, the
// kubelets' clusterDNS). Its Corefile answers cluster.local and the reverse zones from the API
// (`kubernetes` plugin) and forwards nothing: the machine has no outside DNS to forward to. The
// Service needs a Service implementation: the kit runs it with weftd --service-proxy.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR } from '../containerd.ts';
import type { KubeCluster } from './cluster.ts';

/** kube-dns's ClusterIP (the 10th address of the kit's Service CIDR, as kubeadm picks it). */
export const CLUSTER_DNS_IP = '10.96.0.10';
export const COREDNS_IMAGE = 'weft.test/coredns:1.14.0';
export const COREDNS_BIN = join(CACHE_DIR, 'go-bin', 'coredns-v1.14.0', 'coredns');

/** The Corefile: the cluster's zones from the API, health on :8080, readiness on :8181, metrics on :9153; no forwarding. */
export function corefile(domain = 'cluster.local'): string {
  return [
    '.:53 {',
    '    errors',
    '    health :8080',
    '    ready :8181',
    `    kubernetes ${domain} in-addr.arpa ip6.arpa {`,
    '        pods insecure',
    '        fallthrough in-addr.arpa ip6.arpa',
    '        ttl 30',
    '    }',
    '    prometheus :9153',
    '    cache 30',
    '    loadbalance',
    '}',
    '',
  ].join('\n');
}

/** The objects of the DNS addon (ServiceAccount, ClusterRole + binding, ConfigMap, Deployment, Service), as a kubectl List. */
export function clusterDnsManifest(replicas = 2): string {
  const ns = 'kube-system';
  const labels = { 'k8s-app': 'kube-dns' };
  const probe = (path: string, port: number): Record<string, unknown> => ({ httpGet: { path, port }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 5 });
  const items: unknown[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:coredns' }, rules: [
      { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }] },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: ns }, data: { Corefile: corefile() } },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'coredns', namespace: ns, labels },
      spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: {
        serviceAccountName: 'coredns', priorityClassName: 'system-cluster-critical',
        // Its own resolv.conf is the node's: CoreDNS never asks itself.
        dnsPolicy: 'Default', terminationGracePeriodSeconds: 5,
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: labels } }],
        containers: [{ name: 'coredns', image: COREDNS_IMAGE, imagePullPolicy: 'Never', args: ['-conf', '/etc/coredns/Corefile'],
          ports: [{ name: 'dns', containerPort: 53, protocol: 'UDP' }, { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' }, { name: 'metrics', containerPort: 9153, protocol: 'TCP' }],
          readinessProbe: probe('/ready', 8181), livenessProbe: { ...probe('/health', 8080), initialDelaySeconds: 10 },
          resources: { requests: { cpu: '50m', memory: '30Mi' } },
          volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }] }],
        volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
      } } } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kube-dns', namespace: ns, labels: { ...labels, 'kubernetes.io/name': 'CoreDNS' } },
      spec: { clusterIP: CLUSTER_DNS_IP, selector: labels, ports: [
        { name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'metrics', port: 9153, protocol: 'TCP' }] } },
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

/** Why the cluster cannot run DNS here (the CoreDNS build is missing), or undefined. */
export function clusterDnsMissing(): string | undefined {
  return existsSync(COREDNS_BIN) ? undefined : `${COREDNS_BIN} is missing (scripts/coredns-setup.sh builds it)`;
}

/** Applies the DNS addon; resolves with the ms until every CoreDNS pod is Ready (which needs the nodes Ready and the API reachable through the `kubernetes` Service). */
export async function deployClusterDns(k: KubeCluster, replicas = 2, timeoutMs = 180_000): Promise<number> {
  const t0 = Date.now();
  await k.mustKubectl(['apply', '-f', '-'], clusterDnsManifest(replicas));
  await k.waitFor('CoreDNS available', async () => {
    const d = await k.control.call<{ status?: { readyReplicas?: number } }>('GET', '/apis/apps/v1/namespaces/kube-system/deployments/coredns');
    return (d.status?.readyReplicas ?? 0) >= replicas;
  }, timeoutMs, 500);
  return Date.now() - t0;
}
