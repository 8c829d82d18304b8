// Loads the etcd lease store module on demand (runs in weftd's netns). From the sources this is a
// plain dynamic import; in dist/bin/weftd the build replaces this file (scripts/build/lazy-chunk.ts)
// with one that carries the etcd store and its JSON gateway client, bundled on its own and
// compressed, and compiles it on first use, so that a weftd on the file or kube store never parses it.

/** The etcd store module, loaded on first call. */
export function loadEtcdStore(): Promise<typeof import('./store.ts')> {
  return import('./store.ts');
}
