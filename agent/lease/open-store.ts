// One entry point from weftd's flags to a LeaseStore: `--store file:DIR` (default),
// `--etcd-endpoints URL[,URL]` with `--etcd-prefix`, or `--kube-subnet-mgr` (nodes of a Kubernetes API). The net-conf comes from --net-conf when given,
// otherwise from <prefix>/config in etcd (flannel's behaviour); the file store needs --net-conf.
// Each store's module is imported only when that store is chosen.
import { readFileSync } from 'node:fs';
import { type NetConf, parseNetConf } from '../config/net-conf.ts';
import { loadEtcdStore } from './etcd/chunk.ts';
import { loadEtcdGrpc } from './etcd/grpc-chunk.ts';
import { loadKubeStore } from './kube/chunk.ts';
import { FileLeaseStore } from './file/store.ts';
import type { LeaseStore } from './store.ts';
import { normalizeStoreFlags, type StoreFlags } from './store-flags.ts';

export { normalizeStoreFlags, type StoreFlags } from './store-flags.ts';

/** Reads --net-conf if given; null when it was not. */
export function readNetConfFile(path: string | undefined): NetConf | null {
  if (path === undefined) return null;
  let text: Buffer;
  try {
    text = readFileSync(path);
  } catch (e) {
    throw new Error(`--net-conf ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
  }
  return parseNetConf(text);
}

/** Opens the lease store the flags select (connects to etcd, creates the file store's directory). */
export async function openLeaseStore(f: StoreFlags): Promise<LeaseStore> {
  const sel = normalizeStoreFlags(f);
  const netConf = readNetConfFile(f.netConfPath);
  const common = { ...(f.onError ? { onError: f.onError } : {}), ...(f.renewMarginMs !== undefined ? { renewMarginMs: f.renewMarginMs } : {}) };
  if (sel.kind === 'kube') {
    if (!netConf) throw new Error('--net-config-path (or --net-conf) is required with --kube-subnet-mgr');
    // Loaded only when chosen (kube/chunk.ts): the HTTPS client and the YAML reader stay out of other stores' weftd.
    const { KubeLeaseStore, resolveKubeConn } = await loadKubeStore();
    const conn = await resolveKubeConn({ ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}), ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}) });
    const { kind: _, prefix, ...who } = sel;
    return new KubeLeaseStore({ conn, ...who, annotationPrefix: prefix, netConf, ...(f.onError ? { onError: f.onError } : {}) });
  }
  if (sel.kind === 'etcd') {
    // Loaded only when chosen: the store with its JSON gateway client, and the gRPC client (grpc,
    // protobufjs: 10-17 MiB) only where the gateway cannot serve (etcd/client.ts, etcdTransportFor).
    const { openEtcdLeaseStore } = await loadEtcdStore();
    return openEtcdLeaseStore({ endpoints: sel.endpoints, prefix: sel.prefix, loadGrpc: loadEtcdGrpc, ...(f.etcdSecurity ? { security: f.etcdSecurity } : {}), ...(netConf ? { netConf } : {}), ...(f.ttlSeconds ? { ttlSeconds: f.ttlSeconds } : {}), ...common });
  }
  if (!netConf) throw new Error('--net-conf is required with the file store');
  return new FileLeaseStore({ dir: sel.dir, netConf, ...(f.ttlSeconds ? { ttlMs: f.ttlSeconds * 1000 } : {}), ...common });
}
