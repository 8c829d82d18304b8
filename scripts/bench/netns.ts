// A throw-away network namespace for benchmarks: the test kit's (unique name, removed on exit and on
// Ctrl-C), in the shape the bench scripts use.
import { createTestNetnsSync } from '../../testkit/netns.ts';

/** Creates a namespace `weft-b-<pid>-<hex>` and returns its name and path. Needs root. */
export function benchNetns(): { name: string; path: string; remove: () => void } {
  const ns = createTestNetnsSync('weft-b');
  return { name: ns.name, path: `/var/run/netns/${ns.name}`, remove: ns.destroySync };
}
