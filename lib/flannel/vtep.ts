// The VXLAN tunnel endpoints (flannel.<VNI>, and flannel-v6.<VNI> over an IPv6 underlay) shared by
// weftd and the flannel-vxlan plugin: their spec,
// a MAC that is stable across restarts, and an idempotent ensure. Runs in the node's netns (the
// Rtnl socket's). weftd writes the spec next to subnet.env so the plugin can recreate the exact
// same device when it finds it missing (weftd not started yet on this boot, or the device deleted).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { FNV32_OFFSET, FNV32_PRIME, fnv1a32Step } from '../hash/fnv.ts';
import type { Link, Rtnl } from '../netlink/index.ts';
import { isExists, isNotFound } from '../netlink/index.ts';
import { ensureSysctl } from '../netns/sysctl.ts';
import { isSysError } from '../errno/errno.ts';

/** Everything that defines the VTEP; weftd computes it, the plugin replays it. */
export interface VtepSpec {
  /** flannel.<VNI> (IPv4 underlay) or flannel-v6.<VNI> (IPv6 underlay). */
  name: string;
  vni: number;
  /** UDP destination port (8472 by default, the Linux default flannel uses). */
  port: number;
  /** Local (underlay) address: the node's public IP (PublicIPv6 for flannel-v6.<VNI>), in canonical text form. */
  local: string;
  /** Underlay device name, so that the tunnel follows the uplink (IFLA_VXLAN_LINK). */
  uplink: string;
  mac: string;
  mtu: number;
  /** The lease's network address as a /32 ("10.244.3.0/32"), or the IPv6 lease's as a /128, as flannel assigns it. */
  address: string;
}

/**
 * A locally administered unicast MAC derived from the public IP and VNI, so a restart or reboot keeps
 * the VtepMAC that peers already hold in their FDB and neighbour tables. 48 bits from two FNV-1a
 * lanes: the plain hash, and a second lane seeded with the prime and stirred by the first.
 */
export function vtepMac(publicIp: string, vni: number): string {
  let h1 = FNV32_OFFSET;
  let h2 = FNV32_PRIME;
  for (const c of `${publicIp}/${vni}`) {
    h1 = fnv1a32Step(h1, c.charCodeAt(0));
    h2 = fnv1a32Step(h2, c.charCodeAt(0));
    h2 = (h2 ^ (h1 >>> 7)) >>> 0;
  }
  // First octet: bit 1 set = locally administered, bit 0 clear = unicast (IEEE 802 / RFC 7042).
  const bytes = [((h1 >>> 24) & 0xfc) | 0x02, (h1 >>> 16) & 0xff, (h1 >>> 8) & 0xff, h1 & 0xff, (h2 >>> 8) & 0xff, h2 & 0xff];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** True when an existing link matches the spec closely enough to keep (kind, VNI, port, local, MAC). */
export function vtepMatches(link: Link, spec: VtepSpec): boolean {
  return link.kind === 'vxlan' && link.vxlan?.vni === spec.vni && link.vxlan.port === spec.port &&
    (link.vxlan.local === undefined || link.vxlan.local === spec.local) && link.mac === spec.mac;
}

/** Result of ensureVtep: the link and whether it was (re)created in this call. */
export interface EnsuredVtep {
  link: Link;
  created: boolean;
}

/**
 * Idempotent, in the Rtnl socket's netns (which must be the calling thread's, for the sysctl): makes
 * the VTEP exist with the spec's parameters (learning off: peers are programmed, never learnt), the
 * MTU, the MAC, the /32 or /128 address, and up. A device of that name with other parameters is
 * deleted and re-created, as flannel does. An IPv6 VTEP gets accept_ra=0 (flannel's setting: router
 * advertisements must not add routes or addresses to it).
 */
export function ensureVtep(rtnl: Rtnl, spec: VtepSpec): EnsuredVtep {
  let link = rtnl.getLink(spec.name);
  let created = false;
  if (link && !vtepMatches(link, spec)) {
    rtnl.deleteLink(link.index);
    link = null;
  }
  if (!link) {
    const uplink = rtnl.getLink(spec.uplink);
    try {
      rtnl.addVxlan({
        name: spec.name, vni: spec.vni, port: spec.port, local: spec.local, learning: false, mtu: spec.mtu, mac: spec.mac,
        ...(uplink ? { devIndex: uplink.index } : {}),
      });
      created = true;
    } catch (e) {
      // Another agent (weftd vs. a plugin) may have won the race; the re-read below decides.
      if (!isExists(e)) throw e;
    }
    link = rtnl.getLink(spec.name);
    if (!link) throw new Error(`${spec.name} vanished right after creation`);
  }
  if (isV6Spec(spec)) ensureSysctl(`net/ipv6/conf/${spec.name}/accept_ra`, 0);
  if (link.mtu !== spec.mtu) rtnl.setMtu(link.index, spec.mtu);
  ensureVtepAddress(rtnl, link.index, spec.address);
  if (!link.up) rtnl.setLinkUp(link.index);
  return { link: rtnl.getLinkByIndex(link.index) ?? link, created };
}

/** True for a VTEP over an IPv6 underlay (its address is the IPv6 lease's /128). */
function isV6Spec(spec: VtepSpec): boolean {
  return spec.address.includes(':');
}

/**
 * Idempotent: the VTEP carries exactly `address` among global addresses of its family (the device is
 * ours, so others are stale leases). The kernel's IPv6 link-local address (scope link) stays. An IPv6
 * address is added without DAD: it is unique by lease, and a tentative one could not be a source.
 */
function ensureVtepAddress(rtnl: Rtnl, index: number, address: string): void {
  const v6 = address.includes(':');
  const have = rtnl.listAddrs({ family: v6 ? 6 : 4, index }).filter((a) => a.scope === 0);
  for (const a of have) {
    const cidr = a.cidr;
    if (cidr !== address) {
      try { rtnl.delAddr({ index, cidr }); } catch (e) { if (!isNotFound(e)) throw e; }
    }
  }
  if (!have.some((a) => a.cidr === address)) {
    try { rtnl.addAddr({ index, cidr: address, ...(v6 ? { noDad: true } : {}) }); } catch (e) { if (!isExists(e)) throw e; }
  }
}

/** Where weftd leaves the spec: next to subnet.env (e.g. /run/flannel/weft-vtep.json; weft-vtep6.json for flannel-v6.<VNI>). */
export function vtepSpecPath(subnetFile: string, family: 4 | 6 = 4): string {
  return join(dirname(subnetFile), family === 4 ? 'weft-vtep.json' : 'weft-vtep6.json');
}

/** Writes the spec atomically (temp file + rename) so a plugin never reads half of it. */
export function writeVtepSpec(path: string, spec: VtepSpec): void {
  writeFileAtomicSync(path, `${JSON.stringify(spec)}\n`, { mode: 0o644 });
}

/** Reads the spec weftd wrote; null when there is none (weftd never ran with vxlan on this node). */
export function readVtepSpec(path: string): VtepSpec | null {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (e) {
    if (isSysError(e, 'ENOENT')) return null;
    throw e;
  }
  const v = JSON.parse(text) as Partial<VtepSpec>;
  const ok = typeof v.name === 'string' && typeof v.vni === 'number' && typeof v.port === 'number' && typeof v.local === 'string' &&
    typeof v.uplink === 'string' && typeof v.mac === 'string' && typeof v.mtu === 'number' && typeof v.address === 'string';
  if (!ok) throw new Error(`${path}: not a VTEP spec`);
  return v as VtepSpec;
}
