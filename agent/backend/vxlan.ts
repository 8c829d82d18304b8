// vxlan: the flannel.<VNI> VTEP (learning off, stable MAC, MTU = uplink - 50) plus, per remote
// lease, neighbour + FDB + onlink route (programmed by the reconcile loop). TX checksum offload is
// set once per device instance: off only where the kernel's VXLAN checksum bug needs it
// (checksum-offload.ts), otherwise on, so a VTEP left by an older setting gets the kernel default back.
import type { Link, Rtnl } from '../../lib/netlink/index.ts';
import { vtepName } from '../../lib/flannel/devices.ts';
import { ensureVtep, vtepMac, vtepSpecPath, writeVtepSpec, type VtepSpec } from '../../lib/flannel/vtep.ts';
import type { BackendConf } from '../config/backend-conf.ts';
import { formatIPv4, parseCidr4 } from '../../lib/ip/ipv4.ts';
import type { BackendData, Lease } from '../lease/store.ts';
import type { AgentLog } from '../log.ts';
import type { DevIndexes } from '../reconcile/diff.ts';
import type { Uplink } from '../uplink.ts';
import type { Backend } from './backend.ts';
import { applyChecksumOffload, decideChecksumOffload, type OffloadDecision } from './checksum-offload.ts';

/** VXLAN over IPv4: outer IP 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 = 50 bytes (RFC 7348 section 5). */
export const VXLAN_OVERHEAD = 50;

/** The vxlan backend (node netns). */
export class VxlanBackend implements Backend {
  readonly type = 'vxlan' as const;
  private readonly mac: string;
  private readonly mtu: number;
  private offloadDoneFor = -1;
  private readonly offload: OffloadDecision;

  constructor(private readonly conf: BackendConf, private readonly uplink: Uplink, private readonly opts: { subnetFile: string; log: AgentLog }) {
    this.mac = vtepMac(uplink.publicIp, conf.vni);
    this.mtu = conf.mtu ?? uplink.mtu - VXLAN_OVERHEAD;
    this.offload = decideChecksumOffload(conf.checksumOffload);
  }

  /** VNI and the stable VtepMAC. */
  backendData(): BackendData {
    return { VNI: this.conf.vni, VtepMAC: this.mac };
  }

  /** Pods use the VTEP's MTU so that encapsulated frames fit the uplink. */
  podMtu(): number {
    return this.mtu;
  }

  /** The spec of the VTEP for the lease (also written for the flannel-vxlan plugin). */
  spec(own: Lease): VtepSpec {
    const sn = parseCidr4(own.subnet);
    if (sn === null) throw new Error(`own lease subnet ${own.subnet} is not an IPv4 network`);
    return {
      name: vtepName(this.conf.vni), vni: this.conf.vni, port: this.conf.port, local: this.uplink.publicIp, uplink: this.uplink.name,
      mac: this.mac, mtu: this.mtu, address: `${formatIPv4(sn.ip)}/32`,
    };
  }

  /** Idempotent: VTEP present and correct; on a new device instance, TX checksum offload as decided. */
  ensureLocal(rtnl: Rtnl, own: Lease): DevIndexes {
    const spec = this.spec(own);
    const { link, created } = ensureVtep(rtnl, spec);
    if (created) this.opts.log.info('created VTEP', { dev: spec.name, vni: spec.vni, mac: spec.mac, mtu: spec.mtu, local: spec.local });
    if (link.index !== this.offloadDoneFor) {
      this.offloadDoneFor = link.index;
      applyChecksumOffload(spec.name, this.offload, this.opts.log);
      writeVtepSpec(vtepSpecPath(this.opts.subnetFile), spec);
    }
    const up = rtnl.getLink(this.uplink.name);
    if (!up) throw new Error(`uplink ${this.uplink.name} is gone`);
    return { uplink: up.index, vtep: link.index };
  }

  /** The VTEP and the uplink. */
  watchesLink(link: Link): boolean {
    return link.name === vtepName(this.conf.vni) || link.name === this.uplink.name;
  }
}
