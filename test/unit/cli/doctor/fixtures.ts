// Node states for the doctor's pure checks: a vxlan node 192.0.2.11 leasing 10.244.1.0/24 with one
// peer 192.0.2.12 on 10.244.2.0/24, fully programmed, plus helpers to break it in one place.
import type { Addr, Fdb, Link, Neigh, Route } from '../../../../lib/netlink/index.ts';
import { parseNetConf, type Lease, type Uplink } from '../../../../agent/inspect.ts';
import type { NodeState } from '../../../../cli/doctor/node-state.ts';

export const NET_CONF = parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}');
export const OWN: Lease = { subnet: '10.244.1.0/24', publicIp: '192.0.2.11', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0a:00:00:00:00:11' }, expiration: 0 };
export const PEER: Lease = { subnet: '10.244.2.0/24', publicIp: '192.0.2.12', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0a:00:00:00:00:12' }, expiration: 0 };
export const UPLINK: Uplink = { index: 2, name: 'eth0', mtu: 1500, publicIp: '192.0.2.11', cidr: '192.0.2.11/24', publicIpOnUplink: true };

/** A link with the fields the checks read. */
export function link(index: number, name: string, mtu: number, more: Partial<Link> = {}): Link {
  return { index, name, flags: 1, up: true, type: 1, mtu, mac: '02:00:00:00:00:00', operState: 'up', extra: [], ...more };
}

function route(dst: string, gw: string | undefined, oif: number, protocol: number, onlink = false): Route {
  return { family: 4, dst, ...(gw !== undefined ? { gw } : {}), oif, onlink, scope: 0, table: 254, protocol, type: 1, flags: 0 } as Route;
}

/** The healthy node: eth0, flannel.1, cni0 with one pod veth (attachment c1/eth0). */
export function healthyNode(): NodeState {
  const links = [
    link(2, 'eth0', 1500),
    link(3, 'flannel.1', 1450, { kind: 'vxlan' }),
    link(4, 'cni0', 1450, { kind: 'bridge' }),
    link(5, 'w1234560a1b2c3d', 1450, { kind: 'veth', master: 4, alias: 'weft:c1/eth0' }),
  ];
  const addrs: Addr[] = [
    { index: 2, family: 4, cidr: '192.0.2.11/24', address: '192.0.2.11', prefix: 24, scope: 0, flags: 0, extra: [] },
    { index: 4, family: 4, cidr: '10.244.1.1/24', address: '10.244.1.1', prefix: 24, scope: 0, flags: 0, extra: [] },
  ];
  const routes = [route('10.244.2.0/24', '10.244.2.0', 3, 87, true), route('0.0.0.0/0', '192.0.2.1', 2, 4)];
  const neighs: Neigh[] = [{ family: 4, index: 3, ip: '10.244.2.0', mac: '0a:00:00:00:00:12', state: 128, permanent: true, flags: 0, extra: [] }];
  const fdbs: Fdb[] = [{ index: 3, mac: '0a:00:00:00:00:12', dst: '192.0.2.12', state: 128, permanent: true, flags: 2 } as Fdb];
  return { links, addrs, routes, neighs, fdbs, uplink: UPLINK };
}

export { route };
