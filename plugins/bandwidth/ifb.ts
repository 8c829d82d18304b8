// The ifb device an attachment's outgoing traffic is shaped on, in the node netns: created up, with
// the host veth's MTU and queue length (at least 1000, as the reference), tagged by its MAC.
import { isExists, isNotFound } from '../../lib/netlink/errors.ts';
import type { Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ifbMac } from './names.ts';

/** Creates the ifb `name` for `network`, replacing a stale one of the same name (an ADD killed earlier). Returns it. */
export function setupIfb(host: Rtnl, name: string, network: string, veth: Link): Link {
  const spec = { name, mtu: veth.mtu, txqlen: Math.max(veth.txqlen ?? 0, 1000), mac: ifbMac(network), up: true };
  try {
    host.addIfb(spec);
  } catch (e) {
    if (!isExists(e)) throw e;
    teardownIfb(host, name);
    host.addIfb(spec);
  }
  const l = host.getLink(name);
  if (l === null) throw new Error(`ifb ${name} vanished right after it was created`);
  return l;
}

/** Deletes the ifb `name` if there is one (a link of another kind under that name is left alone). Idempotent. */
export function teardownIfb(host: Rtnl, name: string): void {
  const l = host.getLink(name);
  if (l === null || l.kind !== 'ifb') return;
  try {
    host.deleteLink(l.index);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
