// Where one full reconcile pass goes at scale: `node --import tsx scripts/bench/weftd-pass.ts [peers,
// default 5000] [rounds, default 10]` programs N vxlan peers (the weftd bench's fake leases) into a
// namespace of its own, then times each phase of a full pass round by round: the route, neighbour
// and FDB dumps, the desired state, the diff (nothing to change, as in a steady safety-net pass).
// Runs as root (it makes a netns). Not part of `npm run bench`: a probe for one part of `weftd`.
import { execFileSync } from 'node:child_process';
import { Rtnl } from '../../lib/netlink/index.ts';
import { openNetns } from '../../lib/netns/handle.ts';
import { withNetns } from '../../lib/netns/index.ts';
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { applyPlan } from '../../agent/reconcile/apply.ts';
import { desiredState } from '../../agent/reconcile/desired.ts';
import { planReconcile } from '../../agent/reconcile/diff.ts';
import { fakeLease } from './lease-writers.ts';
import { median, round } from './util.ts';

const N = Number(process.argv[2] ?? 5000);
const ROUNDS = Number(process.argv[3] ?? 10);
const ns = createTestNetnsSync('wpass');
const ip = (...a: string[]) => execFileSync('ip', ['-n', ns.name, ...a]);
try {
  ip('link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'up1');
  ip('addr', 'add', '192.168.0.1/24', 'dev', 'up0');
  ip('link', 'set', 'up0', 'up');
  ip('link', 'add', 'flannel.1', 'type', 'vxlan', 'id', '1', 'local', '192.168.0.1', 'dstport', '8472', 'nolearning');
  ip('link', 'set', 'flannel.1', 'up');
  const h = openNetns(ns.path);
  const rtnl = withNetns(h, () => Rtnl.open());
  const links = rtnl.listLinks();
  const dev = { uplink: links.find((l) => l.name === 'up0')?.index ?? 0, vtep: links.find((l) => l.name === 'flannel.1')?.index ?? 0 };
  const leases = Array.from({ length: N }, (_, i) => fakeLease(i));
  const input = { backend: 'vxlan' as const, ownSubnet: '10.0.0.0/24', publicIp: '192.168.0.1', uplinkCidr: '192.168.0.1/24', directRouting: false, vni: 1 };
  const read = () => ({ routes: rtnl.listRoutes({ family: 4, table: 254 }), neighs: rtnl.listNeigh({ family: 4, index: dev.vtep }), fdbs: rtnl.listFdb({ index: dev.vtep }) });
  const first = applyPlan(rtnl, planReconcile(desiredState(input, leases), read(), dev, '10.0.0.0/8'), dev);
  process.stdout.write(`${N} peers programmed (${first.applied.length} changes, ${first.failed.length} failed)\n`);
  const phases: Record<string, number[]> = { routes: [], neighs: [], fdbs: [], desired: [], diff: [], total: [] };
  const time = <T>(k: string, f: () => T): T => { const t = performance.now(); const v = f(); phases[k]?.push(performance.now() - t); return v; };
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    const routes = time('routes', () => rtnl.listRoutes({ family: 4, table: 254 }));
    const neighs = time('neighs', () => rtnl.listNeigh({ family: 4, index: dev.vtep }));
    const fdbs = time('fdbs', () => rtnl.listFdb({ index: dev.vtep }));
    const desired = time('desired', () => desiredState(input, leases));
    const plan = time('diff', () => planReconcile(desired, { routes, neighs, fdbs }, dev, '10.0.0.0/8'));
    phases['total']?.push(performance.now() - t0);
    if (plan.ops.length !== 0) throw new Error(`round ${r}: ${plan.ops.length} changes, want none`);
  }
  for (const [k, v] of Object.entries(phases)) process.stdout.write(`${k.padEnd(8)} median ${round(median(v), 1)} ms, max ${round(Math.max(...v), 1)} ms\n`);
  rtnl.close();
  h.close();
} finally {
  ns.destroySync();
}
