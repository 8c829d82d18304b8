// Which netlink notifications may mean drift in what weftd owns (pure; the events come from the
// node's netns), so that only they trigger a full pass: weftd's own writes echo back as new routes
// and neighbours by the thousand and must not.
import type { RtnlEvent } from '../../lib/netlink/index.ts';
import { cidrContains, parseCidr } from '../../lib/ip/index.ts';
import { RTPROT_WEFT } from './desired.ts';
import type { DevIndexes } from './diff.ts';

/** True for notifications that may mean drift: an overrun, a watched link, a weft route removed, a foreign route in the Network, a VTEP neighbour removed. */
export function isDrift(
  ev: RtnlEvent,
  conf: { network: string; ipv6Network?: string },
  dev: DevIndexes | undefined,
  watchesLink: (link: NonNullable<RtnlEvent['link']>) => boolean,
): boolean {
  if (ev.type === 'overrun') return true;
  if (ev.link) return watchesLink(ev.link);
  if (ev.route) {
    if (ev.route.table !== 254) return false;
    if (ev.route.protocol === RTPROT_WEFT) return ev.type === 'delroute';
    const net = parseCidr(ev.route.family === 4 ? conf.network : conf.ipv6Network ?? '');
    const dst = parseCidr(ev.route.dst);
    return net !== null && dst !== null && cidrContains(net, dst.addr);
  }
  // Our own neighbour/FDB writes come back as newneigh; only removals on a VTEP are drift.
  const index = ev.neigh?.index ?? ev.fdb?.index;
  return ev.type === 'delneigh' && index !== undefined && (index === dev?.vtep || index === dev?.vtep6);
}
