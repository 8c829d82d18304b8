// Check "mtu": one chain of MTUs from the uplink through the backend device (VTEP or TUN) and
// subnet.env's FLANNEL_MTU to cni0 and every pod veth on it. A mismatch silently drops large
// packets (PMTU black holes), the classic vxlan symptom. Pure.
import type { NetConf, Uplink } from '../../agent/inspect.ts';
import { UDP_TUN_NAME, vtepName } from '../../lib/flannel/devices.ts';
import type { SubnetEnv } from '../../lib/flannel/subnet-env.ts';
import type { NodeState } from './node-state.ts';
import type { CheckResult, Problem } from './problem.ts';

/** Encapsulation overheads weftd subtracts from the uplink MTU (outer IPv4 + UDP + VXLAN + Ethernet; IPv4 + UDP). */
const OVERHEAD = { vxlan: 50, udp: 28, 'host-gw': 0 } as const;

/** Inputs of the MTU check. */
export interface MtuInput {
  netConf: NetConf;
  uplink: Uplink;
  env: SubnetEnv | null;
  bridge: string;
  node: NodeState;
}

/** Runs the check. */
export function checkMtu(i: MtuInput): CheckResult {
  const check = 'mtu';
  const problems: Problem[] = [];
  const b = i.netConf.backend;
  const podMtu = b.type === 'host-gw' ? i.uplink.mtu : (b.mtu ?? i.uplink.mtu - OVERHEAD[b.type]);
  const facts: Record<string, unknown> = { uplink: `${i.uplink.name}=${i.uplink.mtu}`, pods: podMtu };
  if (b.type !== 'host-gw') {
    const name = b.type === 'vxlan' ? vtepName(b.vni) : UDP_TUN_NAME;
    const dev = i.node.links.find((l) => l.name === name);
    if (dev !== undefined) {
      facts['device'] = `${name}=${dev.mtu}`;
      if (dev.mtu !== podMtu) problems.push({ check, detail: `${name} has MTU ${dev.mtu}, expected ${podMtu} (uplink ${i.uplink.mtu} - ${OVERHEAD[b.type]}${b.mtu !== undefined ? ', or Backend.MTU' : ''})`, fix: `systemctl restart weftd (it sets it), or: ip link set dev ${name} mtu ${podMtu}` });
      if (dev.mtu > i.uplink.mtu - OVERHEAD[b.type]) problems.push({ check, detail: `${name} MTU ${dev.mtu} + ${OVERHEAD[b.type]} bytes of encapsulation exceeds the uplink's ${i.uplink.mtu}: large packets are dropped`, fix: `lower Backend.MTU in net-conf.json to at most ${i.uplink.mtu - OVERHEAD[b.type]} and restart weftd` });
    }
  }
  if (i.env !== null && i.env.mtu !== podMtu) {
    problems.push({ check, detail: `subnet.env FLANNEL_MTU=${i.env.mtu}, but the backend gives pods ${podMtu}: new pods get the wrong MTU`, fix: 'systemctl restart weftd (it rewrites subnet.env); then recreate the pods created meanwhile' });
  }
  const br = i.node.links.find((l) => l.name === i.bridge);
  if (br !== undefined) {
    facts['bridge'] = `${i.bridge}=${br.mtu}`;
    if (br.mtu > podMtu) problems.push({ check, detail: `${i.bridge} has MTU ${br.mtu}, above the pods' ${podMtu}`, fix: `ip link set dev ${i.bridge} mtu ${podMtu}` });
    const ports = i.node.links.filter((l) => l.master === br.index);
    facts['veths'] = ports.length;
    for (const p of ports) {
      if (p.mtu === podMtu) continue;
      const who = p.alias?.startsWith('weft:') === true ? ` (${p.alias.slice(5)})` : '';
      problems.push({ check, detail: `pod veth ${p.name}${who} on ${i.bridge} has MTU ${p.mtu}, pods on this node use ${podMtu}`, fix: `recreate that pod (its eth0 was set up the same way), or: ip link set dev ${p.name} mtu ${podMtu} and the same on the pod's eth0` });
    }
  }
  return { check, problems, facts };
}
