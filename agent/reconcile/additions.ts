// The plan for peers that just joined (pure): their neighbour, FDB entry and route, added without
// reading the kernel. Routes are added without replace, so a destination that already holds a route
// (ours from an earlier lease, flanneld's, another owner's) fails with EEXIST and the caller falls
// back to a full pass, which adopts, replaces or leaves it alone as planReconcile decides.
import type { DesiredState } from './desired.ts';
import type { Op, Plan } from './diff.ts';

/** Operations adding everything `desired` (the joined leases' desired state) holds: neighbours, FDB entries, then routes. */
export function planAdditions(desired: DesiredState): Plan {
  const ops: Op[] = [
    ...desired.neighs.map((want): Op => ({ kind: 'add-neigh', want, replace: false })),
    ...desired.fdbs.map((want): Op => ({ kind: 'add-fdb', want, replace: false })),
    ...desired.routes.map((want): Op => ({ kind: 'add-route', want, replace: false })),
  ];
  return { ops, conflicts: [], adopted: [], inPlace: 0 };
}
