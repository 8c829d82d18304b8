// DEL: forgiving on purpose. Works without CNI_NETNS, without prevResult, after the netns is gone and
// after an ADD killed at any point: each step treats "already gone" as done.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { isNotFound } from '../../lib/netlink/errors.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { parseBridgeConfig } from './config.ts';
import { ipamDel } from './ipam.ts';
import { teardownMacSpoof } from './macspoof.ts';
import { teardownMasq } from './masquerade.ts';
import { attachmentAlias, hostVethName } from './names.ts';
import { isNetnsGone, openPodNs } from './netns.ts';
import { teardownLinkByName, teardownVethByAlias, teardownVethByName } from './veth.ts';

/** Removes the pod's interface in its netns; false when the netns is gone or there was no such link. */
function teardownPodLink(netns: string, ifName: string): boolean {
  let pod;
  try {
    pod = openPodNs(netns);
  } catch (e) {
    if (isNetnsGone(e) || (e as { code?: unknown }).code === 3) return false;
    throw e;
  }
  try {
    return teardownLinkByName(pod.rtnl, ifName);
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  } finally {
    pod.close();
  }
}

/** DEL, run in the node netns: masquerade and macspoofchk elements, the veth pair, then the IPAM lease (so the address is freed last). */
export async function cmdDel(a: CmdArgs): Promise<void> {
  const cfg = parseBridgeConfig(a);
  if (cfg.ipMasq) {
    // Before IPAM DEL: once the address is free another ADD may take it and add its own element.
    const prevIps = a.prevResult?.ips?.map((ip) => ip.address);
    const spec = { network: cfg.name, containerId: a.containerId, ifName: a.ifName };
    teardownMasq(prevIps !== undefined && prevIps.length > 0 ? { ...spec, podCidrs: prevIps } : spec);
  }
  // Found by comment, so neither the netns nor prevResult is needed.
  if (cfg.macSpoofChk) teardownMacSpoof({ network: cfg.name, containerId: a.containerId, ifName: a.ifName });
  const removed = a.netns !== '' && teardownPodLink(a.netns, a.ifName);
  if (!removed) {
    // No pod side to go through: find the host end by its computed name, then (veths with random
    // `veth` names) by its alias; none is left when the pair went with the netns.
    const host = Rtnl.open();
    try {
      const name = hostVethName(cfg.name, a.containerId, a.ifName);
      if (!teardownVethByName(host, name, attachmentAlias(a.containerId, a.ifName))) teardownVethByAlias(host, a.containerId, a.ifName);
    } finally {
      host.close();
    }
  }
  if (cfg.ipam !== undefined) await ipamDel(a, cfg);
}
