// vxlan: the flannel.<VNI> VTEP (learning off, stable MAC, MTU = uplink - 50) plus, per remote
// lease, neighbour + FDB + onlink route (programmed by the reconcile loop). With IPv6 enabled, a
// second VTEP flannel-v6.<VNI> over the node's PublicIPv6 carries the IPv6 side the same way, its MAC
// advertised in BackendV6Data (flannel's pkg/backend/vxlan). TX checksum offload is set once per
// device instance: off only where the kernel's VXLAN checksum bug needs it (checksum-offload.ts),
// otherwise on, so a VTEP left by an older setting gets the kernel default back.
import type { Link, Rtnl } from '../../lib/netlink/index.ts';
import { vtep6Name, vtepName } from '../../lib/flannel/devices.ts';
import { ensureVtep, vtepMac, vtepSpecPath, writeVtepSpec, type VtepSpec } from '../../lib/flannel/vtep.ts';
import type { BackendConf } from '../config/backend-conf.ts';
import { formatIp, hasHostBits, parseCidr, parseIp } from '../../lib/ip/index.ts';
import type { BackendData, Lease } from '../lease/store.ts';
import type { AgentLog } from '../log.ts';
import type { DevIndexes } from '../reconcile/diff.ts';
import type { Uplink } from '../uplink.ts';
import type { Backend, UplinkV6 } from './backend.ts';
import { applyChecksumOffload, decideChecksumOffload, type OffloadDecision } from './checksum-offload.ts';
import { readAdoptableMac } from './vxlan-adopt.ts';

/** VXLAN over IPv4: outer IP 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 = 50 bytes (RFC 7348 section 5). */
export const VXLAN_OVERHEAD = 50;
/** VXLAN over IPv6: the outer header is 40 bytes, so 70 (the kernel's VXLAN6_HEADROOM, its MTU limit for such a device). */
export const VXLAN6_OVERHEAD = 70;

/** The vxlan backend (node netns). */
export class VxlanBackend implements Backend {
  readonly type = 'vxlan' as const;
  private mac: string;
  private readonly mtu: number;
  private readonly v6: { uplink: UplinkV6; mac: string; mtu: number } | undefined;
  private readonly offloadDoneFor = new Map<string, number>();
  private readonly offload: OffloadDecision;

  constructor(
    private readonly conf: BackendConf,
    private readonly uplink: Uplink,
    private readonly opts: { subnetFile: string; log: AgentLog; ipv6?: UplinkV6; network?: string; ipv6Network?: string },
  ) {
    this.mac = vtepMac(uplink.publicIp, conf.vni);
    this.mtu = conf.mtu ?? uplink.mtu - VXLAN_OVERHEAD;
    if (opts.ipv6 !== undefined) {
      // IFNAMSIZ (linux/if.h) leaves 15 bytes: "flannel-v6." takes 11, so the VNI must be below 10000.
      if (vtep6Name(conf.vni).length > 15) throw new Error(`vxlan: with EnableIPv6 the VNI must be below 10000 (the device name ${vtep6Name(conf.vni)} exceeds 15 bytes)`);
      const ip = parseIp(opts.ipv6.publicIp);
      if (ip === null || ip.family !== 6) throw new Error(`vxlan: PublicIPv6 ${JSON.stringify(opts.ipv6.publicIp)} is not an IPv6 address`);
      const publicIp = formatIp(ip);
      this.v6 = { uplink: { ...opts.ipv6, publicIp }, mac: vtepMac(publicIp, conf.vni), mtu: conf.mtu ?? uplink.mtu - VXLAN6_OVERHEAD };
    }
    this.offload = decideChecksumOffload(conf.checksumOffload);
  }

  /**
   * Before the lease is taken: keeps the MAC of a VTEP already on the node with our parameters and an
   * address in the cluster network (flanneld's random one after a switch), so the lease advertises
   * what peers already hold and ensureLocal keeps the device instead of re-creating it.
   */
  adoptLocal(rtnl: Rtnl): void {
    const up = rtnl.getLink(this.uplink.name);
    const base = { vni: this.conf.vni, port: this.conf.port, ...(up ? { uplinkIndex: up.index } : {}) };
    const mac4 = this.opts.network === undefined || !this.ipv4 ? null
      : readAdoptableMac(rtnl, vtepName(this.conf.vni), 4, { ...base, local: this.uplink.publicIp, network: this.opts.network });
    if (mac4 !== null && mac4 !== this.mac) {
      this.opts.log.info('kept the existing VTEP and its MAC (flanneld\'s or an earlier one): peers keep their entries', { dev: vtepName(this.conf.vni), mac: mac4 });
      this.mac = mac4;
    }
    if (this.v6 === undefined || this.opts.ipv6Network === undefined) return;
    const mac6 = readAdoptableMac(rtnl, vtep6Name(this.conf.vni), 6, { ...base, local: this.v6.uplink.publicIp, network: this.opts.ipv6Network });
    if (mac6 !== null && mac6 !== this.v6.mac) {
      this.opts.log.info('kept the existing VTEP and its MAC (flanneld\'s or an earlier one): peers keep their entries', { dev: vtep6Name(this.conf.vni), mac: mac6 });
      this.v6.mac = mac6;
    }
  }

  /** VNI and the stable VtepMAC; nothing on an IPv6-only net-conf (no flannel.<VNI>, as flanneld). */
  backendData(): BackendData {
    return this.ipv4 ? { VNI: this.conf.vni, VtepMAC: this.mac } : {};
  }

  /** False on an IPv6-only net-conf (empty Network): only flannel-v6.<VNI> exists then. */
  private get ipv4(): boolean {
    return this.opts.network !== '';
  }

  /** VNI and the stable MAC of flannel-v6.<VNI>; undefined when IPv6 is off. */
  backendV6Data(): BackendData | undefined {
    return this.v6 === undefined ? undefined : { VNI: this.conf.vni, VtepMAC: this.v6.mac };
  }

  /**
   * Pods use the VTEP's MTU so that encapsulated frames fit the uplink; with IPv6 on, the smaller
   * flannel-v6 one, since a pod's single interface carries both families. (flannel keeps uplink - 50
   * and leaves IPv6 pods to path-MTU discovery against its kernel-sized flannel-v6 device.)
   */
  podMtu(): number {
    return this.v6 === undefined ? this.mtu : Math.min(this.mtu, this.v6.mtu);
  }

  /** The spec of the IPv4 VTEP for the lease (also written for the flannel-vxlan plugin). */
  spec(own: Lease): VtepSpec {
    return {
      name: vtepName(this.conf.vni), vni: this.conf.vni, port: this.conf.port, local: this.uplink.publicIp, uplink: this.uplink.name,
      mac: this.mac, mtu: this.mtu, address: `${networkAddress(own.subnet, 4)}/32`,
    };
  }

  /** The spec of flannel-v6.<VNI> for the lease; null when IPv6 is off or the lease has no IPv6 subnet. */
  spec6(own: Lease): VtepSpec | null {
    if (this.v6 === undefined || own.ipv6Subnet === undefined || own.ipv6Subnet === '') return null;
    return {
      name: vtep6Name(this.conf.vni), vni: this.conf.vni, port: this.conf.port, local: this.v6.uplink.publicIp, uplink: this.uplink.name,
      mac: this.v6.mac, mtu: this.v6.mtu, address: `${networkAddress(own.ipv6Subnet, 6)}/128`,
    };
  }

  /** Idempotent: VTEP(s) present and correct; on a new device instance, TX checksum offload as decided. */
  ensureLocal(rtnl: Rtnl, own: Lease): DevIndexes {
    const vtep = this.ipv4 ? this.ensureOne(rtnl, this.spec(own), 4) : undefined;
    const s6 = this.spec6(own);
    if (this.v6 !== undefined && s6 === null) throw new Error(`own lease ${own.subnet} has no IPv6 subnet although IPv6 is enabled`);
    const vtep6 = s6 === null ? undefined : this.ensureOne(rtnl, s6, 6);
    const up = rtnl.getLink(this.uplink.name);
    if (!up) throw new Error(`uplink ${this.uplink.name} is gone`);
    return { uplink: up.index, ...(vtep !== undefined ? { vtep } : {}), ...(vtep6 !== undefined ? { vtep6 } : {}) };
  }

  private ensureOne(rtnl: Rtnl, spec: VtepSpec, family: 4 | 6): number {
    const { link, created } = ensureVtep(rtnl, spec);
    if (created) this.opts.log.info('created VTEP', { dev: spec.name, vni: spec.vni, mac: spec.mac, mtu: spec.mtu, local: spec.local });
    if (link.index !== this.offloadDoneFor.get(spec.name)) {
      this.offloadDoneFor.set(spec.name, link.index);
      applyChecksumOffload(spec.name, this.offload, this.opts.log);
      writeVtepSpec(vtepSpecPath(this.opts.subnetFile, family), spec);
    }
    return link.index;
  }

  /** The VTEP(s) and the uplink. */
  watchesLink(link: Link): boolean {
    return link.name === vtepName(this.conf.vni) || link.name === this.uplink.name || (this.v6 !== undefined && link.name === vtep6Name(this.conf.vni));
  }
}

/** "10.244.3.0/24" -> "10.244.3.0" (canonical text); throws when it is not a network of `family`. */
function networkAddress(subnet: string, family: 4 | 6): string {
  const c = parseCidr(subnet);
  if (c === null || c.addr.family !== family || hasHostBits(c)) throw new Error(`own lease subnet ${subnet} is not an IPv${family} network`);
  return formatIp(c.addr);
}
