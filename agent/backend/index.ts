// The backend factory: the one module that knows every backend, so backend.ts (the interface) and
// the backends (vxlan, host-gw, udp) depend on each other in one direction only.
import type { BackendConf } from '../config/backend-conf.ts';
import type { AgentLog } from '../log.ts';
import type { Uplink } from '../uplink.ts';
import type { Backend } from './backend.ts';
import { HostGwBackend } from './host-gw.ts';
import { UdpBackend } from './udp.ts';
import { VxlanBackend } from './vxlan.ts';

export type { Backend } from './backend.ts';

/** Builds the backend the net-conf selects; throws when the node cannot run it. */
export function createBackend(conf: BackendConf, uplink: Uplink, opts: { subnetFile: string; log: AgentLog; network?: string }): Backend {
  switch (conf.type) {
    case 'vxlan': return new VxlanBackend(conf, uplink, opts);
    case 'host-gw': return new HostGwBackend(uplink);
    case 'udp': return new UdpBackend(conf, uplink, { network: opts.network ?? '', log: opts.log });
  }
}
