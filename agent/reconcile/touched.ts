// The peers a sliced full pass must leave alone (pure bookkeeping, no I/O). Such a pass computes the
// desired state first and reads routes, neighbours and FDB in later turns of the event loop, while
// lease events arrive and joins are programmed in between; for a peer touched in that window its
// kernel entries and its desired state may come from different moments (a route read before the
// join added it, a neighbour read after), so the pass drops every operation on it. Joins program
// themselves; a replaced or removed lease makes the next pass a full one (reconcile/changes.ts).
import { canonicalCidr, formatCidr, formatIp, parseCidr, type Cidr } from '../../lib/ip/index.ts';
import type { Lease } from '../lease/store.ts';
import type { Op, Plan } from './diff.ts';

/** The network form of a lease subnet, as desired.ts and the kernel write a destination. */
function network(s: string | undefined): Cidr | null {
  const c = parseCidr(s ?? '');
  return c === null ? null : canonicalCidr(c);
}

/** Route destinations, VTEP neighbour addresses and VTEP MACs of the leases touched since a pass began. */
export class TouchedPeers {
  private readonly dsts = new Set<string>();
  private readonly vteps = new Set<string>();
  private readonly macs = new Set<string>();

  /** Records both families' entries of `l` (call it with the old and the new lease of a change). */
  add(l: Lease): void {
    for (const [subnet, data] of [[l.subnet, l.backendData], [l.ipv6Subnet, l.backendV6Data]] as const) {
      const c = network(subnet);
      if (c !== null) {
        this.dsts.add(formatCidr(c));
        this.vteps.add(formatIp(c.addr));
      }
      const mac = data?.VtepMAC;
      if (typeof mac === 'string') this.macs.add(mac.toLowerCase());
    }
  }

  /** True when `op` concerns a touched peer. */
  concerns(op: Op): boolean {
    switch (op.kind) {
      case 'add-route': return this.dsts.has(op.want.dst);
      case 'del-route': return this.dsts.has(op.route.dst);
      case 'add-neigh': return this.vteps.has(op.want.ip);
      case 'del-neigh': return this.vteps.has(op.neigh.ip);
      case 'add-fdb': return this.macs.has(op.want.mac);
      case 'del-fdb': return this.macs.has(op.fdb.mac.toLowerCase());
    }
  }

  /** `plan` without the operations, conflicts and adoptions on touched peers (pure). */
  filter(plan: Plan): Plan {
    if (this.dsts.size === 0 && this.macs.size === 0) return plan;
    return {
      ops: plan.ops.filter((op) => !this.concerns(op)),
      conflicts: plan.conflicts.filter((c) => !this.dsts.has(c.dst)),
      adopted: plan.adopted.filter((a) => !this.dsts.has(a.dst)),
      inPlace: plan.inPlace,
    };
  }
}
