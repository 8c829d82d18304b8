// Waiting for the host port: the reference reports success only once the host veth is operationally up.
import { CniError } from '../../lib/cni/errors.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { BridgeError } from './errors.ts';

const DEADLINE_MS = 2000;

// Date.now(), not performance.now(): the `performance` global loads perf_hooks and nine internal
// modules on first use, a cost paid by every ADD for a 2 s deadline that needs no sub-ms precision.
const now = (): number => Date.now();

/**
 * Polls link `index` in rtnl's netns (node) until its operstate is up; code 111 after 2 s. A veth is up
 * as soon as both ends are (drivers/net/veth.c sets carrier on open), so this normally returns at once.
 */
export async function waitPortUp(rtnl: Rtnl, index: number, name: string): Promise<void> {
  const start = now();
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    const l = rtnl.getLinkByIndex(index);
    if (l === null) throw new CniError(BridgeError.portNotUp, `host port ${name} disappeared`);
    if (l.operState === 'up') return;
    if (now() - start > DEADLINE_MS) {
      throw new CniError(BridgeError.portNotUp, `bridge port ${name} did not come up`, `operstate ${l.operState} after ${DEADLINE_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}
