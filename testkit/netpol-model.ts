// The upstream Kubernetes netpol e2e model (test/e2e/network/netpol): namespaces x, y, z with pods
// a, b, c, each serving TCP 80, TCP 81 and UDP 80, and a truth table of expected reachability per
// probe, set with the same verbs as upstream's Reachability (ExpectPeer, Expect, ExpectAllIngress,
// ExpectAllEgress). Loopback (a pod to itself) is ignored, as upstream does. Pure.

export const NAMESPACES = ['x', 'y', 'z'] as const;
export const POD_NAMES = ['a', 'b', 'c'] as const;
/** "x/a" */
export type PodId = string;
export const ALL_PODS: PodId[] = NAMESPACES.flatMap((ns) => POD_NAMES.map((p) => `${ns}/${p}`));

/** One probe kind: a destination port and protocol. */
export interface ProbeKind {
  port: number;
  protocol: 'TCP' | 'UDP';
}
export const PROBES: ProbeKind[] = [{ port: 80, protocol: 'TCP' }, { port: 81, protocol: 'TCP' }, { port: 80, protocol: 'UDP' }];
export const probeName = (p: ProbeKind): string => `${p.port}/${p.protocol}`;

/** The container ports every model pod declares (upstream's names: serve-<port>-<protocol>). */
export function modelPorts(): { name: string; containerPort: number; protocol: string }[] {
  return PROBES.map((p) => ({ name: `serve-${p.port}-${p.protocol.toLowerCase()}`, containerPort: p.port, protocol: p.protocol }));
}

/** A peer pattern: a namespace, a pod name, both or neither (everything). */
export interface Peer {
  namespace?: string;
  pod?: string;
}

function matches(peer: Peer, id: PodId): boolean {
  const [ns, pod] = id.split('/');
  return (peer.namespace === undefined || peer.namespace === ns) && (peer.pod === undefined || peer.pod === pod);
}

/** A 9 x 9 truth table. */
export class Reachability {
  readonly table = new Map<string, boolean>();

  constructor(defaultAllowed = true) {
    for (const f of ALL_PODS) for (const t of ALL_PODS) this.table.set(`${f}>${t}`, defaultAllowed);
  }

  expect(from: PodId, to: PodId, ok: boolean): this {
    this.table.set(`${from}>${to}`, ok);
    return this;
  }

  expectPeer(from: Peer, to: Peer, ok: boolean): this {
    for (const f of ALL_PODS) for (const t of ALL_PODS) if (matches(from, f) && matches(to, t)) this.expect(f, t, ok);
    return this;
  }

  expectAllIngress(to: PodId, ok: boolean): this {
    return this.expectPeer({}, { namespace: to.split('/')[0] ?? '', pod: to.split('/')[1] ?? '' }, ok);
  }

  expectAllEgress(from: PodId, ok: boolean): this {
    return this.expectPeer({ namespace: from.split('/')[0] ?? '', pod: from.split('/')[1] ?? '' }, {}, ok);
  }

  get(from: PodId, to: PodId): boolean {
    return this.table.get(`${from}>${to}`) === true;
  }
}

/** The pairs where `observed` differs from `expected` (loopback ignored). */
export function mismatches(expected: Reachability, observed: Reachability): string[] {
  const out: string[] = [];
  for (const f of ALL_PODS) for (const t of ALL_PODS) {
    if (f === t) continue;
    if (expected.get(f, t) !== observed.get(f, t)) out.push(`${f} -> ${t}: expected ${expected.get(f, t) ? 'allow' : 'deny'}`);
  }
  return out;
}

/** The table as upstream prints it: rows are sources, columns destinations, '.' allowed, 'X' denied. */
export function formatTable(r: Reachability): string {
  const lines = [`      ${ALL_PODS.join(' ')}`];
  for (const f of ALL_PODS) lines.push(`${f}   ${ALL_PODS.map((t) => (f === t ? '#' : r.get(f, t) ? '.' : 'X').padEnd(3)).join(' ')}`);
  return lines.join('\n');
}
