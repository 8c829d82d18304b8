// Loads the gRPC etcd client (grpc.ts) on demand (runs in weftd's netns). From the sources this
// is a plain dynamic import; in dist/bin/weftd the build replaces this file (scripts/build/lazy-chunk.ts)
// with one that carries etcd3, grpc-js and protobufjs compressed and compiles them on first use, so
// a weftd talking to etcd through the JSON gateway never parses them. Imported by ../open-store.ts only
// (and handed to the etcd store), so that it is a chunk of its own beside the etcd store's.

/** The gRPC etcd client module, loaded on first call. */
export function loadEtcdGrpc(): Promise<typeof import('./grpc.ts')> {
  return import('./grpc.ts');
}
