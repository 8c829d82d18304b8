// The flannel-udp plugin object: flannel's CNI semantics, plus a check that flannel0 is there.
// Unlike a VTEP, the TUN device only exists while weftd holds its fd (the forwarder is weftd
// itself), so the plugin cannot re-create it: a missing or down flannel0 means "try again later".
import { tryAgainLater } from '../../lib/cni/errors.ts';
import type { Plugin } from '../../lib/cni/plugin.ts';
import { Rtnl } from '../../lib/netlink/index.ts';
import { UDP_TUN_NAME as TUN_NAME } from '../../lib/flannel/devices.ts';
import { makeFlannelPlugin } from '../../lib/flannel-cni/commands.ts';

/** In the runtime's (node's) netns: throws code 11 unless flannel0 exists and is up. */
function checkTun(): void {
  const rtnl = Rtnl.open();
  try {
    const link = rtnl.getLink(TUN_NAME);
    if (link === null || !link.up) {
      throw tryAgainLater(`${TUN_NAME} is ${link === null ? 'missing' : 'down'}`, 'weftd (Backend.Type udp) creates it and forwards its packets; is weftd running?');
    }
  } finally {
    rtnl.close();
  }
}

/** flannel-udp: bridge + host-local delegate rendered from subnet.env, flannel0 checked. */
export const flannelUdpPlugin: Plugin = makeFlannelPlugin('flannel-udp', {
  beforeAdd: () => checkTun(),
});
