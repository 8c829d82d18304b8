// Check "peers": the lease table against what the kernel holds. The desired state comes from the
// very functions weftd reconciles with (desiredState + planReconcile), so doctor and weftd never
// disagree about what "right" is; each pending operation becomes a named problem with its repair.
import { desiredState, planReconcile, type DevIndexes, type Op } from '../../agent/inspect.ts';
import { vtepName } from '../../lib/flannel/devices.ts';
import { checkUdp } from './check-udp.ts';
import type { PeersInput } from './peers-input.ts';
import { WEFTD_FIXES, type CheckResult, type Problem } from './problem.ts';

const check = 'peers';

/** The problem one pending reconcile operation stands for (pure). */
export function opProblem(op: Op, vtep: string, uplink: string): Problem {
  const dev = (d: 'vtep' | 'uplink'): string => (d === 'vtep' ? vtep : uplink);
  switch (op.kind) {
    case 'add-route':
      return { check, detail: `${op.replace ? 'route drifted' : 'route missing'}: ${op.want.dst} should go via ${op.want.gw} dev ${dev(op.want.dev)}${op.want.onlink ? ' onlink' : ''}`, fix: `${WEFTD_FIXES}; by hand: ip route replace ${op.want.dst} via ${op.want.gw} dev ${dev(op.want.dev)}${op.want.onlink ? ' onlink' : ''} proto 87` };
    case 'add-neigh':
      return { check, detail: `${op.replace ? 'neighbour drifted' : 'neighbour missing'}: ${op.want.ip} should be ${op.want.mac} (permanent) on ${vtep}`, fix: `${WEFTD_FIXES}; by hand: ip neigh replace ${op.want.ip} lladdr ${op.want.mac} dev ${vtep} nud permanent` };
    case 'add-fdb':
      return { check, detail: `${op.replace ? 'FDB entry drifted' : 'FDB entry missing'}: ${op.want.mac} should send to ${op.want.dst} on ${vtep}`, fix: `${WEFTD_FIXES}; by hand: bridge fdb replace ${op.want.mac} dev ${vtep} dst ${op.want.dst} self permanent` };
    case 'del-route':
      return { check, detail: `stale route: ${op.route.dst} via ${op.route.gw ?? '-'} (weft's, proto 87) matches no lease`, fix: `ip route del ${op.route.dst} proto 87` };
    case 'del-fdb':
      return { check, detail: `stale FDB entry: ${op.fdb.mac} dst ${op.fdb.dst ?? '-'} on ${vtep} matches no lease (traffic to that MAC goes to a node that is gone)`, fix: `bridge fdb del ${op.fdb.mac} dev ${vtep} dst ${op.fdb.dst ?? ''} self` };
    case 'del-neigh':
      return { check, detail: `stale neighbour: ${op.neigh.ip} lladdr ${op.neigh.mac ?? '-'} on ${vtep} matches no lease`, fix: `ip neigh del ${op.neigh.ip} dev ${vtep}` };
  }
}

/** Runs the peers check (pure over the read state). */
export function checkPeers(i: PeersInput): CheckResult {
  const problems: Problem[] = [];
  const b = i.netConf.backend;
  const facts: Record<string, unknown> = { backend: b.type, peers: i.leases.filter((l) => l.subnet !== i.own.subnet).length };
  if (b.type === 'udp') return checkUdp(i, facts);
  const dev: DevIndexes = { uplink: i.uplink.index };
  const vtep = vtepName(b.vni);
  if (b.type === 'vxlan') {
    const link = i.node.links.find((l) => l.name === vtep);
    if (link === undefined) {
      problems.push({ check, detail: `the VTEP ${vtep} does not exist: no traffic reaches other nodes`, fix: 'systemctl restart weftd (it creates the VTEP)' });
      return { check, problems, facts };
    }
    dev.vtep = link.index;
    if (!link.up) problems.push({ check, detail: `the VTEP ${vtep} is down`, fix: `ip link set ${vtep} up` });
  }
  const desired = desiredState({ backend: b.type, ownSubnet: i.own.subnet, publicIp: i.uplink.publicIp, uplinkCidr: i.uplink.cidr, directRouting: b.directRouting, vni: b.vni }, i.leases);
  const plan = planReconcile(desired, { routes: i.node.routes, neighs: i.node.neighs, fdbs: i.node.fdbs }, dev, i.netConf.network);
  facts['inPlace'] = plan.inPlace;
  for (const op of plan.ops) problems.push(opProblem(op, vtep, i.uplink.name));
  for (const c of plan.conflicts) {
    problems.push({ check, detail: `a route to peer subnet ${c.dst} exists that weft did not create (proto ${c.protocol}); weftd leaves it alone`, fix: `ip route del ${c.dst} (check first what installed it)` });
  }
  for (const s of desired.skipped) problems.push({ check, detail: `lease ${s.subnet} cannot be programmed: ${s.reason}`, fix: 'every node must run the same backend and VNI (net-conf.json Backend); fix that node\'s weftd' });
  return { check, problems, facts };
}
