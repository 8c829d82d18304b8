// Replays the VTEP spec weftd left next to subnet.env, for the plugins that delegate on a vxlan
// node (flannel-vxlan always, flannel when subnet.env says the node runs vxlan). Runs in the
// runtime's (node's) netns.
import { Rtnl } from '../../lib/netlink/index.ts';
import { subnetNetwork } from './ipam.ts';
import type { FlannelEnv } from '../../lib/flannel/subnet-file.ts';
import { ensureVtep, readVtepSpec, vtepSpecPath, type VtepSpec } from '../../lib/flannel/vtep.ts';

/**
 * True when the spec describes the backend weftd runs now: its MTU is the pods' MTU and its address
 * is the lease's network. A spec left by an earlier vxlan run (weftd since moved to host-gw or udp,
 * or to another lease) fails one of the two, and is not replayed.
 */
export function specIsCurrent(spec: VtepSpec, env: FlannelEnv): boolean {
  const net = subnetNetwork(env.subnet);
  return net !== null && spec.mtu === env.mtu && spec.address === `${net.split('/')[0] ?? ''}/32`;
}

/** Idempotent, in the node's netns: the VTEP weftd described exists and is up (missing spec: nothing to do). */
export function ensureVtepFromSpec(subnetFile: string, env?: FlannelEnv): void {
  const spec = readVtepSpec(vtepSpecPath(subnetFile));
  if (spec === null) return; // weftd never ran here with vxlan: nothing to replay
  if (env !== undefined && !specIsCurrent(spec, env)) return;
  const rtnl = Rtnl.open();
  try {
    const link = rtnl.getLink(spec.name);
    // Only a missing or down device is repaired here; anything subtler is weftd's job.
    if (link === null || !link.up) ensureVtep(rtnl, spec);
  } finally {
    rtnl.close();
  }
}
