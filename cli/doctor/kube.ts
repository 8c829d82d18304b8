// `weft doctor` on a --kube-subnet-mgr node: the API reached as weftd reaches it (a kubeconfig, or
// the in-cluster service account), every Node read once (GET, nothing written), this node's Node by
// name, and its podCIDR and flannel annotations judged as weftd and flanneld read them. The leases
// of the other checks are the Nodes' (weftd's own reader, nodeToLease), and a net-conf that is only
// in the DaemonSet's ConfigMap is read from there. Runs in the node's netns.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  annotationKeys, KubeApiError, KubeClient, nodePodCidr4, nodeToLease, parseNetConf, resolveKubeConn, subnetInNetwork,
  type KubeNode, type Lease, type NetConf,
} from '../../agent/inspect.ts';
import type { CheckResult, Problem } from './problem.ts';

/** The kube-subnet-mgr flags doctor shares with weftd, and where the net-conf may live. */
export interface KubeOptions {
  kubeconfigFile?: string;
  kubeApiUrl?: string;
  /** The Node's name: --node-name, NODE_NAME, else the host name (kubelet's default). */
  nodeName: string;
  annotationPrefix: string;
  /** namespace/name of the ConfigMap holding net-conf.json (the DaemonSet's). */
  configMap: string;
}

/** What the API held. */
export interface KubeView {
  server: string;
  nodes: KubeNode[];
  node: KubeNode | null;
  /** net-conf.json from the ConfigMap, when it was read there. */
  netConfText?: string;
}

/** A view of the API that could not be read, with the reason and what was asked. */
export interface KubeFailure {
  error: string;
  status?: number;
  server?: string;
}

/** Where kubeadm puts the kubelet's kubeconfig: its identity may read Nodes, so doctor on the host uses it by default. */
export const KUBELET_KUBECONFIG = '/etc/kubernetes/kubelet.conf';

/** The kubeconfig doctor uses when given none: KUBECONFIG, else the kubelet's (not in a pod), else none (in-cluster). */
export function defaultKubeconfig(env: Readonly<Record<string, string | undefined>>, exists: (p: string) => boolean = existsSync): string | undefined {
  if (env['KUBECONFIG']) return env['KUBECONFIG'].split(':')[0];
  if (env['KUBERNETES_SERVICE_HOST']) return undefined;
  return exists(KUBELET_KUBECONFIG) ? KUBELET_KUBECONFIG : undefined;
}

/** The node name as weftd finds it when run here (NODE_NAME), else kubelet's default (the host name, lower case). */
export function defaultNodeName(env: Readonly<Record<string, string | undefined>>): string {
  return env['NODE_NAME'] || hostname().toLowerCase();
}

/** Reads the Nodes (and the ConfigMap's net-conf when `wantNetConf`); a failure comes back as KubeFailure. */
export async function readKube(k: KubeOptions, wantNetConf: boolean): Promise<KubeView | KubeFailure> {
  let server: string | undefined;
  try {
    const conn = await resolveKubeConn({ ...(k.kubeconfigFile !== undefined ? { kubeconfigFile: k.kubeconfigFile } : {}), ...(k.kubeApiUrl !== undefined ? { kubeApiUrl: k.kubeApiUrl } : {}) });
    server = conn.server;
    const client = new KubeClient(conn, 5000);
    const list = await client.call('GET', '/api/v1/nodes') as { items?: KubeNode[] } | null;
    const nodes = list?.items ?? [];
    const node = nodes.find((n) => n.metadata?.name === k.nodeName) ?? null;
    let netConfText: string | undefined;
    if (wantNetConf) {
      const [ns, name] = k.configMap.split('/');
      const cm = await client.call('GET', `/api/v1/namespaces/${encodeURIComponent(ns ?? '')}/configmaps/${encodeURIComponent(name ?? '')}`) as { data?: Record<string, string> } | null;
      netConfText = cm?.data?.['net-conf.json'];
      if (netConfText === undefined) throw new Error(`ConfigMap ${k.configMap} has no net-conf.json`);
    }
    return { server, nodes, node, ...(netConfText !== undefined ? { netConfText } : {}) };
  } catch (e) {
    return { error: (e as Error).message, ...(e instanceof KubeApiError ? { status: e.status } : {}), ...(server !== undefined ? { server } : {}) };
  }
}

/** The net-conf: the file when it exists, else the ConfigMap's text. */
export function kubeNetConf(file: string | undefined, view: KubeView): NetConf {
  if (file !== undefined && existsSync(file)) return parseNetConf(readFileSync(file));
  if (view.netConfText !== undefined) return parseNetConf(Buffer.from(view.netConfText));
  throw new Error(`no net-conf: ${file ?? '--net-conf'} does not exist and the ConfigMap was not read`);
}

/** Every Node's lease as weftd reads it (Nodes weftd or flanneld has not annotated hold none). */
export function kubeLeases(view: KubeView, prefix: string): Lease[] {
  return view.nodes.map((n) => nodeToLease(n, prefix)).filter((l): l is Lease => l !== null);
}

/** Inputs of the kube check. */
export interface KubeCheckInput {
  view: KubeView | KubeFailure;
  opts: KubeOptions;
  /** How doctor reached the API (for the fixes). */
  via: string;
  netConf: NetConf | null;
  uplinkIp: string | null;
  daemonSet: boolean;
}

/** Judges what the API holds about this node (pure). */
export function checkKube(i: KubeCheckInput): CheckResult {
  const check = 'kube';
  const problems: Problem[] = [];
  const facts: Record<string, unknown> = { node: i.opts.nodeName, via: i.via };
  const logs = i.daemonSet ? `kubectl -n kube-weft logs -c weftd <the weft pod on ${i.opts.nodeName}>` : 'journalctl -u weftd -n 50';
  if ('error' in i.view) {
    if (i.view.server !== undefined) facts['server'] = i.view.server;
    const denied = i.view.status === 401 || i.view.status === 403;
    problems.push({
      check,
      detail: `cannot read Nodes from the Kubernetes API (${i.via}): ${i.view.error}`,
      fix: denied
        ? (i.daemonSet
          ? 'the weft ServiceAccount needs get/list/watch/patch on nodes (ClusterRole weft in deploy/weft.yaml) and get on its ConfigMap: kubectl auth can-i list nodes --as system:serviceaccount:kube-weft:weft'
          : `the credentials of ${i.via} must allow get/list on nodes (weftd also needs patch): kubectl auth can-i list nodes`)
        : i.daemonSet
          ? 'run doctor where weftd runs (kubectl -n kube-weft exec <the weft pod> -c weftd -- /opt/weft/weft doctor), or give --kubeconfig-file (the kubelet\'s /etc/kubernetes/kubelet.conf can read Nodes)'
          : 'pass --kubeconfig-file (and --kube-api-url) as weftd has them (systemctl cat weftd), and check that the API server is reachable from this node',
    });
    return { check, problems, facts };
  }
  facts['server'] = i.view.server;
  facts['nodes'] = i.view.nodes.length;
  const n = i.view.node;
  if (n === null) {
    problems.push({ check, detail: `no Node named ${JSON.stringify(i.opts.nodeName)} among the ${i.view.nodes.length} Nodes: weftd finds its Node by that name (NODE_NAME, or its pod's spec.nodeName)`, fix: `pass --node-name as the kubelet registered this node (kubectl get nodes -o wide), or set NODE_NAME as weftd has it` });
    return { check, problems, facts };
  }
  const cidr = nodePodCidr4(n);
  if (cidr !== null) facts['podCIDR'] = cidr;
  if (cidr === null) {
    problems.push({ check, detail: `Node ${i.opts.nodeName} has no IPv4 spec.podCIDR: weftd cannot take a subnet ("pod cidr not assigned") and every pod ADD on this node fails`, fix: 'run kube-controller-manager with --allocate-node-cidrs=true --cluster-cidr=<the net-conf Network> (kubeadm: --pod-network-cidr), or set the Node\'s spec.podCIDR when it is created' });
  } else if (i.netConf !== null && !subnetInNetwork(cidr, i.netConf.network)) {
    problems.push({ check, detail: `Node ${i.opts.nodeName}'s podCIDR ${cidr} is outside the net-conf Network ${i.netConf.network}: weftd refuses it`, fix: `make --cluster-cidr of kube-controller-manager and the net-conf Network the same (the Network must hold every podCIDR)` });
  }
  const k = annotationKeys(i.opts.annotationPrefix);
  const a = n.metadata?.annotations ?? {};
  const missing = [k.subnetManager, k.backendType, k.publicIp, k.backendData].filter((key) => a[key] === undefined || (key === k.subnetManager && a[key] !== 'true'));
  if (missing.length > 0) {
    problems.push({ check, detail: `Node ${i.opts.nodeName} lacks ${missing.join(', ')}: weftd has not announced this node, so no other node routes to its pods`, fix: `weftd writes them once it holds the podCIDR: is it running and allowed to patch Nodes? ${logs}` });
    return { check, problems, facts };
  }
  facts['publicIp'] = a[k.publicIp];
  // With public-ip-overwrite (k3s --flannel-external-ip) the announced address is not the uplink's by design.
  const overwritten = a[`${i.opts.annotationPrefix.replace(/\/$/, '')}/public-ip-overwrite`] !== undefined;
  if (!overwritten && i.uplinkIp !== null && a[k.publicIp] !== i.uplinkIp) {
    problems.push({ check, detail: `Node ${i.opts.nodeName} announces public-ip ${a[k.publicIp] ?? ''}, but this node's uplink address is ${i.uplinkIp}: other nodes send its pods' traffic to the announced address`, fix: `run weftd with the --iface/--public-ip it should use (or doctor with weftd's --iface); weftd rewrites the annotation at start. ${logs}` });
  }
  const type = a[k.backendType];
  if (i.netConf !== null && type !== undefined && type !== '' && type !== i.netConf.backend.type) {
    problems.push({ check, detail: `Node ${i.opts.nodeName} announces backend-type ${type}, but the net-conf Backend.Type is ${i.netConf.backend.type}`, fix: `every node must run the same backend: restart weftd with this net-conf (${logs})` });
  }
  return { check, problems, facts };
}
