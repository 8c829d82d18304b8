// weftd's lease-store flags and their validation (which store, and the etcd TLS/auth pairs), pure:
// shared by weftd (open-store.ts opens what this selects) and `weft doctor`, which reads the same
// store without loading any store module.
import type { EtcdSecurity } from './etcd/client.ts';
import { DEFAULT_ANNOTATION_PREFIX } from './kube/node-lease.ts';
import { type NodeNameSource, checkNodeNameSource } from '../kube/node-name.ts';
import { DEFAULT_ETCD_PREFIX } from './lease-json.ts';

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

/** One --etcd-endpoints URL: http(s)://host[:port] (weftd's etcd clients speak nothing else). */
function checkEndpoint(e: string): void {
  let u: URL | undefined;
  try {
    u = new URL(e);
  } catch {
    u = undefined;
  }
  if (u === undefined || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
    throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is not an http:// or https:// URL with a host (such as http://127.0.0.1:2379)`);
  }
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
    for (const e of endpoints) checkEndpoint(e);
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
