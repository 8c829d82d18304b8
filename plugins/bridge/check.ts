// CHECK: live state against prevResult (bridge, veth pairing and master, pod addresses and routes,
// macspoofchk elements), then CHECK forwarded to IPAM. Any mismatch is code 112 naming what differs.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Interface, Result } from '../../lib/cni/types.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { parseBridgeConfig } from './config.ts';
import { checkFailed } from './errors.ts';
import { ipamCheck } from './ipam.ts';
import { checkMacSpoof } from './macspoof.ts';
import { openPodNs, type PodNs } from '../../lib/pod/netns.ts';
import { defaultGatewayFor } from './pod-iface.ts';

function findIface(prev: Result, pred: (i: Interface) => boolean, what: string): Interface {
  const i = prev.interfaces?.find(pred);
  if (i === undefined) throw checkFailed(`prevResult has no ${what} interface`);
  return i;
}

function expectLink(rtnl: Rtnl, name: string, where: string): Link {
  const l = rtnl.getLink(name);
  if (l === null) throw checkFailed(`${where} interface ${name} not found`);
  return l;
}

function checkMac(l: Link, want: Interface): void {
  if (want.mac !== '' && l.mac !== want.mac.toLowerCase()) throw checkFailed(`interface ${l.name} has MAC ${l.mac}`, `prevResult says ${want.mac}`);
}

/** Pod side, through the pod's socket: the interface, its addresses and routes. Returns the link. */
function checkPod(pod: PodNs, prev: Result, ifName: string, hostIndex: number): Link {
  const iface = findIface(prev, (i) => i.name === ifName && i.sandbox !== undefined, `pod (${ifName})`);
  const link = expectLink(pod.rtnl, ifName, 'pod');
  checkMac(link, iface);
  if (link.kind !== 'veth' || link.peerIndex !== hostIndex) throw checkFailed(`pod interface ${ifName} is not the peer of the host veth`, `peer index ${String(link.peerIndex)}, host veth index ${hostIndex}`);
  const have = new Set(pod.rtnl.listAddrs({ index: link.index }).map((a) => a.cidr));
  for (const ip of prev.ips ?? []) {
    if (!have.has(ip.address)) throw checkFailed(`address ${ip.address} not found on ${ifName}`, `has ${[...have].join(', ') || 'none'}`);
  }
  const routes = pod.rtnl.listRoutes();
  for (const r of prev.routes ?? []) {
    const gw = r.gw ?? defaultGatewayFor(prev.ips ?? [], r.dst);
    const ok = routes.some((k) => k.dst === r.dst && k.oif === link.index && (gw === undefined || k.gw === gw));
    if (!ok) throw checkFailed(`route ${r.dst}${gw !== undefined ? ` via ${gw}` : ''} not found on ${ifName}`);
  }
  return link;
}

/** CHECK, run in the node netns. Needs prevResult (spec: CHECK without it is an error). */
export async function cmdCheck(a: CmdArgs): Promise<void> {
  const cfg = parseBridgeConfig(a);
  const prev = a.prevResult;
  if (prev === undefined) throw invalidConfig('CHECK needs prevResult', 'the runtime must pass the cached ADD result');
  const host = Rtnl.open();
  const pod = openPodNs(a.netns);
  try {
    const br = expectLink(host, cfg.bridge, 'bridge');
    if (br.kind !== 'bridge') throw checkFailed(`${cfg.bridge} is not a bridge`, `kind ${br.kind ?? 'unknown'}`);
    checkMac(br, findIface(prev, (i) => i.name === cfg.bridge && i.sandbox === undefined, `bridge (${cfg.bridge})`));
    const hostIface = findIface(prev, (i) => i.name !== cfg.bridge && i.sandbox === undefined, 'host veth');
    const hv = expectLink(host, hostIface.name, 'host');
    checkMac(hv, hostIface);
    if (hv.master !== br.index) throw checkFailed(`host veth ${hv.name} is not a port of ${cfg.bridge}`, `master ${String(hv.master)}`);
    const podLink = checkPod(pod, prev, a.ifName, hv.index);
    if (hv.peerIndex !== podLink.index) throw checkFailed(`host veth ${hv.name} is not paired with ${a.ifName}`);
    if (cfg.macSpoofChk) checkMacSpoof({ network: cfg.name, containerId: a.containerId, ifName: a.ifName, hostIfName: hv.name, podMac: podLink.mac });
  } finally {
    pod.close();
    host.close();
  }
  if (cfg.ipam !== undefined) await ipamCheck(a, cfg);
}
