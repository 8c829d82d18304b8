// The backend factory: the one module that knows every backend, so backend.ts (the interface) and
// the backends (vxlan, host-gw, udp) depend on each other in one direction only.
import type { BackendConf } from '../config/backend-conf.ts';
import type { AgentLog } from '../log.ts';
import type { Uplink } from '../uplink.ts';
import type { Backend, UplinkV6 } from './backend.ts';
import { HostGwBackend } from './host-gw.ts';
import { UdpBackend } from './udp.ts';
import { VxlanBackend } from './vxlan.ts';

export type { Backend, UplinkV6 } from './backend.ts';

/** Builds the backend the net-conf selects (`ipv6` set when it enables IPv6); throws when the node cannot run it. */
export function createBackend(conf: BackendConf, uplink: Uplink, opts: { subnetFile: string; log: AgentLog; network?: string; ipv6Network?: string; ipv6?: UplinkV6 }): Backend {
  switch (conf.type) {
    case 'vxlan': return new VxlanBackend(conf, uplink, opts);
    case 'host-gw': return new HostGwBackend(uplink, opts.ipv6, opts.network !== '');
    case 'udp':
      // flannel's udp backend leases and forwards IPv4 only (pkg/backend/udp: PublicIP and an IP4Net TUN).
      if (opts.ipv6 !== undefined) throw new Error('the udp backend is IPv4-only (as flannel\'s): set EnableIPv6 to false, or use the vxlan or host-gw backend for IPv6');
      return new UdpBackend(conf, uplink, { network: opts.network ?? '', log: opts.log });
  }
}
