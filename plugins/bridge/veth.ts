// The veth pair: created from the node netns with the pod end born inside the pod netns (no move, no
// rename), the host end named after its network and attachment (hostVethName), so DEL and GC can
// attribute it from the creating message on, enslaved to the bridge and also tagged with an alias.
import { isExists, isNotFound } from '../../lib/netlink/errors.ts';
import type { Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import type { NetnsHandle } from '../../lib/netns/handle.ts';
import { withNetns } from '../../lib/netns/with-netns.ts';
import { setIfSysctl } from './bridge-link.ts';
import { conflict } from './errors.ts';
import { attachmentAlias, hostVethName } from '../../lib/attach/bridge-veth.ts';

/** What setupVeth needs. */
export interface VethSpec {
  /** The CNI network name: the first part of the host veth's name. */
  network: string;
  containerId: string;
  ifName: string;
  mtu: number;
  mac: string | undefined;
  bridgeIndex: number;
  hairpin: boolean;
  enableDad: boolean;
}

/** Both ends after setup: host end in the node netns, pod end in the pod netns. */
export interface VethPair {
  host: Link;
  pod: Link;
}

/**
 * Creates the pair (host end in rtnl's netns = node, pod end in `podNs` named spec.ifName), enslaves the
 * host end with hairpin as asked, sets the pod end's sysctls (accept_dad, arp_notify) and brings both up.
 * `onCreated` runs right after the pair exists, so the caller's rollback can remove it whatever fails next.
 * An existing spec.ifName in the pod is refused (the creation answers EEXIST, see createPair).
 */
export function setupVeth(host: Rtnl, pod: Rtnl, podNs: NetnsHandle, spec: VethSpec, onCreated: (hostName: string) => void): VethPair {
  const hostName = createPair(host, pod, podNs, spec);
  onCreated(hostName);
  const hostLink = mustGet(host, hostName, 'host');
  // Alias, master and up in one RTM_SETLINK: do_setlink (net/core/rtnetlink.c) applies IFLA_IFALIAS and
  // IFLA_MASTER before the flags, so the port is enslaved before it comes up, as with three requests.
  host.setPort(hostLink.index, { alias: attachmentAlias(spec.containerId, spec.ifName), master: spec.bridgeIndex, up: !spec.hairpin });
  // Hairpin is a bridge-port flag: only settable once the link is enslaved; the port comes up after it.
  if (spec.hairpin) {
    host.setHairpin(hostLink.index, true);
    host.setLinkUp(hostLink.index);
  }
  const podLink = mustGet(pod, spec.ifName, 'pod');
  withNetns(podNs, () => {
    // Pods come up faster without IPv6 duplicate address detection (reference: off unless enabledad);
    // arp_notify announces the new MAC so neighbours drop stale entries of a reused IP. The link was
    // just created with the namespace's defaults, so the values are written without reading them first.
    setIfSysctl(`net/ipv6/conf/${spec.ifName}/accept_dad`, spec.enableDad ? 1 : 0);
    setIfSysctl(`net/ipv4/conf/${spec.ifName}/arp_notify`, 1);
  });
  pod.setLinkUp(podLink.index);
  // Name, index and MAC are what callers read; none of them changes by enslaving or bringing a veth up.
  return { host: { ...hostLink, master: spec.bridgeIndex }, pod: podLink };
}

/**
 * Creates the pair under its computed host name. EEXIST on that name means a stale pair of this very
 * attachment (an earlier ADD killed before its rollback ran): ours by construction, so it is deleted and
 * the creation retried once, unless its alias names another attachment (a hash collision).
 */
function createPair(host: Rtnl, pod: Rtnl, podNs: NetnsHandle, spec: VethSpec): string {
  const name = hostVethName(spec.network, spec.containerId, spec.ifName);
  const req: Parameters<Rtnl['addVeth']>[0] = { name, peerName: spec.ifName, peerNetnsFd: podNs.fd };
  if (spec.mtu > 0) req.mtu = spec.mtu;
  if (spec.mac !== undefined) req.peerMac = spec.mac;
  for (let attempt = 0; ; attempt++) {
    try {
      host.addVeth(req);
      return name;
    } catch (e) {
      if (!isExists(e)) throw e;
      // EEXIST names either end; if the pod name appeared meanwhile, deleting the host one cannot help.
      if (pod.getLink(spec.ifName) !== null) throw conflict(`container veth name provided (${spec.ifName}) already exists`, `in ${podNs.path}`);
      const stale = host.getLink(name);
      const ours = stale !== null && mayBeAttachment(stale, attachmentAlias(spec.containerId, spec.ifName));
      if (attempt > 0 || !ours) throw conflict(`host veth name ${name} is taken`, stale === null ? 'EEXIST' : `by ${stale.kind ?? 'link'} alias ${stale.alias ?? '-'}`);
      teardownLinkByName(host, name);
    }
  }
}

function mustGet(rtnl: Rtnl, name: string, side: string): Link {
  const l = rtnl.getLink(name);
  if (l === null) throw conflict(`${side} veth ${name} disappeared during setup`);
  return l;
}

/** Forgiving, in rtnl's netns: deletes the link `name` (a veth takes its peer along); absent is fine. */
export function teardownLinkByName(rtnl: Rtnl, name: string): boolean {
  const l = rtnl.getLink(name);
  if (l === null) return false;
  try {
    rtnl.deleteLink(l.index);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  return true;
}

/**
 * Whether veth `l`, found under an attachment's computed name, may be that attachment's: untagged (an
 * ADD killed before tagging) or tagged with its `alias`. Another weft alias is a live pod whose name
 * hash collides with this attachment's, which must never be deleted in its place.
 */
export function mayBeAttachment(l: Link, alias: string): boolean {
  return l.kind === 'veth' && (l.alias === undefined || l.alias === '' || l.alias === alias);
}

/** Forgiving, in the node netns: deletes the host veth `name` if mayBeAttachment(alias); true if it did. */
export function teardownVethByName(host: Rtnl, name: string, alias: string): boolean {
  const l = host.getLink(name);
  if (l === null || !mayBeAttachment(l, alias)) return false;
  try {
    host.deleteLink(l.index);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  return true;
}

/**
 * Forgiving, in the node netns: deletes host veths carrying the attachment's alias (ports of any bridge),
 * for a DEL that has neither CNI_NETNS nor prevResult. Returns how many were removed.
 */
export function teardownVethByAlias(host: Rtnl, containerId: string, ifName: string): number {
  const alias = attachmentAlias(containerId, ifName);
  let n = 0;
  for (const l of host.listLinks()) {
    if (l.kind !== 'veth' || l.alias !== alias) continue;
    try {
      host.deleteLink(l.index);
      n++;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return n;
}
