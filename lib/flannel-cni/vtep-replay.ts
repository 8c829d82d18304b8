// Replays the VTEP specs weftd left next to subnet.env (flannel.<VNI>, and flannel-v6.<VNI> on a
// dual-stack node), for the plugins that delegate on a vxlan node (flannel-vxlan always, flannel
// when subnet.env says the node runs vxlan). Runs in the runtime's (node's) netns.
import { Rtnl } from '../netlink/index.ts';
import { subnetNetwork } from './ipam.ts';
import type { FlannelEnv } from '../flannel/subnet-file.ts';
import { ensureVtep, readVtepSpec, vtepSpecPath, type VtepSpec } from '../flannel/vtep.ts';

/** An IPv6 outer header is 20 bytes longer than an IPv4 one (VXLAN overhead 70 against 50). */
const V6_EXTRA_OVERHEAD = 20;

/**
 * True when the spec describes the backend weftd runs now: its address is the lease's network (the
 * IPv4 /32 or the IPv6 /128) and its MTU is the pods' MTU (on a dual-stack node pods get the
 * flannel-v6 MTU, 20 below flannel.<VNI>'s unless the net-conf sets one MTU for both). A spec left
 * by an earlier vxlan run (weftd since moved to host-gw or udp, or to another lease) fails one of
 * the two, and is not replayed.
 */
export function specIsCurrent(spec: VtepSpec, env: FlannelEnv): boolean {
  const v6 = spec.address.endsWith('/128');
  const sn = v6 ? env.ipv6Subnet : env.subnet;
  const net = sn === undefined || sn === '' ? null : subnetNetwork(sn);
  const dual = env.ipv6Subnet !== undefined && env.ipv6Subnet !== '';
  const mtuOk = spec.mtu === env.mtu || (!v6 && dual && spec.mtu === env.mtu + V6_EXTRA_OVERHEAD);
  return net !== null && mtuOk && spec.address === `${net.split('/')[0] ?? ''}/${v6 ? 128 : 32}`;
}

/** Idempotent, in the node's netns: the VTEPs weftd described exist and are up (missing spec: nothing to do). */
export function ensureVtepFromSpec(subnetFile: string, env?: FlannelEnv): void {
  const specs: VtepSpec[] = [];
  for (const family of [4, 6] as const) {
    const spec = readVtepSpec(vtepSpecPath(subnetFile, family));
    // No spec: weftd never ran here with vxlan (or without IPv6); a stale one is left alone.
    if (spec !== null && (env === undefined || specIsCurrent(spec, env))) specs.push(spec);
  }
  if (specs.length === 0) return;
  const rtnl = Rtnl.open();
  try {
    for (const spec of specs) {
      const link = rtnl.getLink(spec.name);
      // Only a missing or down device is repaired here; anything subtler is weftd's job.
      if (link === null || !link.up) ensureVtep(rtnl, spec);
    }
  } finally {
    rtnl.close();
  }
}
