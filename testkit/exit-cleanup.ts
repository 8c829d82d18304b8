// Last-resort teardown of runtime environments (podman, containerd) bound to a node namespace, when
// the test process exits without its after() hooks (crash, Ctrl-C): one registry, one exit listener.
// The listener is prepended so that it runs before netns.ts deletes the node namespaces, because a
// runtime's CNI DEL must run inside its node namespace, never in the root one.

/** Anything that can tear itself down synchronously, idempotently. */
export interface SyncDestroyable {
  destroySync(): void;
}

const live = new Set<SyncDestroyable>();
let hooked = false;

/** Registers `env` for teardown at exit; returns the function that unregisters it (call it from destroySync). */
export function destroyAtExit(env: SyncDestroyable): () => void {
  if (!hooked) {
    hooked = true;
    process.prependListener('exit', () => {
      for (const e of [...live]) e.destroySync();
    });
  }
  live.add(env);
  return () => void live.delete(env);
}
