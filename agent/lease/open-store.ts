// One entry point from weftd's flags to a LeaseStore: `--store file:DIR` (default),
// `--etcd-endpoints URL[,URL]` with `--etcd-prefix`, or `--kube-subnet-mgr` (nodes of a Kubernetes API). The net-conf comes from --net-conf when given,
// otherwise from <prefix>/config in etcd (flannel's behaviour); the file store needs --net-conf.
// Each store's module is imported only when that store is chosen.
import { readFileSync } from 'node:fs';
import { type NetConf, parseNetConf } from '../config/net-conf.ts';
import type { EtcdSecurity } from './etcd-client.ts';
import { loadEtcdStore } from './etcd-chunk.ts';
import { FileLeaseStore } from './file-store.ts';
import { DEFAULT_ANNOTATION_PREFIX } from '../kube/node-lease.ts';
import { type NodeNameSource, checkNodeNameSource } from '../kube/node-name.ts';
import { DEFAULT_ETCD_PREFIX } from './lease-json.ts';
import type { LeaseStore } from './store.ts';

/** The store-related flags as the CLI parsed them (strings as typed). */
export interface StoreFlags {
  store?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
  netConfPath?: string;
  /** --etcd-cafile, --etcd-certfile, --etcd-keyfile, --etcd-username, --etcd-password. */
  etcdSecurity?: EtcdSecurity;
  /** Renew the own lease this long before it expires (--subnet-lease-renew-margin). */
  renewMarginMs?: number;
  /** --kube-subnet-mgr and its options; nodeName comes from NODE_NAME, else the pod POD_NAMESPACE/POD_NAME is looked up. */
  kubeSubnetMgr?: boolean;
  kubeconfigFile?: string;
  kubeApiUrl?: string;
  kubeAnnotationPrefix?: string;
  nodeName?: string;
  podName?: string;
  podNamespace?: string;
  /** Test knobs; defaults are flannel's (24 h TTL). */
  ttlSeconds?: number;
  onError?: (err: Error) => void;
}

/** Which store the flags select; throws naming the flag when they are contradictory or malformed. */
export function normalizeStoreFlags(f: StoreFlags): { kind: 'file'; dir: string } | { kind: 'etcd'; endpoints: string[]; prefix: string } | ({ kind: 'kube'; prefix: string } & NodeNameSource) {
  const sec = f.etcdSecurity ?? {};
  const secFlags = Object.entries(sec).filter(([, v]) => v !== undefined).map(([k]) => `--etcd-${k}`);
  if (f.etcdEndpoints === undefined && secFlags.length > 0) throw new Error(`${secFlags.join(', ')} need --etcd-endpoints`);
  // A client certificate is half a credential without its key (and the reverse).
  if ((sec.certfile === undefined) !== (sec.keyfile === undefined)) throw new Error('--etcd-certfile and --etcd-keyfile go together');
  if (sec.password !== undefined && sec.username === undefined) throw new Error('--etcd-password needs --etcd-username');
  if (f.kubeSubnetMgr === true) {
    if (f.store !== undefined || f.etcdEndpoints !== undefined) throw new Error('--kube-subnet-mgr and --store/--etcd-endpoints are mutually exclusive');
    const who: NodeNameSource = f.nodeName ? { nodeName: f.nodeName } : { ...(f.podName ? { podName: f.podName } : {}), ...(f.podNamespace ? { podNamespace: f.podNamespace } : {}) };
    checkNodeNameSource(who);
    const prefix = f.kubeAnnotationPrefix ?? DEFAULT_ANNOTATION_PREFIX;
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(\/[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$/.test(prefix)) throw new Error(`--kube-annotation-prefix ${JSON.stringify(prefix)} is not a DNS-style prefix such as flannel.alpha.coreos.com`);
    return { kind: 'kube', prefix, ...who };
  }
  if (f.etcdEndpoints !== undefined) {
    if (f.store !== undefined) throw new Error(`--store ${JSON.stringify(f.store)} and --etcd-endpoints are mutually exclusive`);
    const endpoints = f.etcdEndpoints.split(',').map((s) => s.trim()).filter(Boolean);
    if (endpoints.length === 0) throw new Error(`--etcd-endpoints ${JSON.stringify(f.etcdEndpoints)} lists no URL`);
    const prefix = f.etcdPrefix ?? DEFAULT_ETCD_PREFIX;
    if (!prefix.startsWith('/')) throw new Error(`--etcd-prefix ${JSON.stringify(prefix)} must start with "/"`);
    return { kind: 'etcd', endpoints, prefix };
  }
  if (f.etcdPrefix !== undefined) throw new Error('--etcd-prefix needs --etcd-endpoints');
  const spec = f.store ?? 'file:/var/lib/weft/leases';
  const m = /^file:(\/.+)$/.exec(spec);
  if (!m) throw new Error(`--store ${JSON.stringify(spec)} must be file:/absolute/dir (or use --etcd-endpoints)`);
  return { kind: 'file', dir: m[1] as string };
}

/** Reads --net-conf if given; null when it was not. */
export function readNetConfFile(path: string | undefined): NetConf | null {
  if (path === undefined) return null;
  return parseNetConf(readFileSync(path));
}

/** Opens the lease store the flags select (connects to etcd, creates the file store's directory). */
export async function openLeaseStore(f: StoreFlags): Promise<LeaseStore> {
  const sel = normalizeStoreFlags(f);
  const netConf = readNetConfFile(f.netConfPath);
  const common = { ...(f.onError ? { onError: f.onError } : {}), ...(f.renewMarginMs !== undefined ? { renewMarginMs: f.renewMarginMs } : {}) };
  if (sel.kind === 'kube') {
    if (!netConf) throw new Error('--net-config-path (or --net-conf) is required with --kube-subnet-mgr');
    const { KubeLeaseStore } = await import('./kube-store.ts');
    const { resolveKubeConn } = await import('../kube/config.ts');
    const conn = resolveKubeConn({ ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}), ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}) });
    const { kind: _, prefix, ...who } = sel;
    return new KubeLeaseStore({ conn, ...who, annotationPrefix: prefix, netConf, ...(f.onError ? { onError: f.onError } : {}) });
  }
  if (sel.kind === 'etcd') {
    // Loaded only when chosen: the etcd client (grpc, protobufjs) is most of an idle weftd's memory.
    const { openEtcdLeaseStore } = await loadEtcdStore();
    return openEtcdLeaseStore({ endpoints: sel.endpoints, prefix: sel.prefix, ...(f.etcdSecurity ? { security: f.etcdSecurity } : {}), ...(netConf ? { netConf } : {}), ...(f.ttlSeconds ? { ttlSeconds: f.ttlSeconds } : {}), ...common });
  }
  if (!netConf) throw new Error('--net-conf is required with the file store');
  return new FileLeaseStore({ dir: sel.dir, netConf, ...(f.ttlSeconds ? { ttlMs: f.ttlSeconds * 1000 } : {}), ...common });
}
