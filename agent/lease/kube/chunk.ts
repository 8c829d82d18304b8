// Loads the Kubernetes lease store on demand (runs in weftd's netns). From the sources this is a
// plain dynamic import; in dist/bin/weftd the build replaces this file (scripts/build/lazy-chunk.ts)
// with one that carries the kube store, its HTTPS client and the kubeconfig (YAML) reader, bundled on
// their own and compressed, and compiles them on first use: a weftd on the file or etcd store never
// parses them.
import type { KubeLeaseStore } from './store.ts';
import type { resolveKubeConn } from '../../kube/config.ts';

/** The kube store and the connection resolver, loaded on first call. */
export async function loadKubeStore(): Promise<{ KubeLeaseStore: typeof KubeLeaseStore; resolveKubeConn: typeof resolveKubeConn }> {
  const [store, config] = await Promise.all([import('./store.ts'), import('../../kube/config.ts')]);
  return { KubeLeaseStore: store.KubeLeaseStore, resolveKubeConn: config.resolveKubeConn };
}
