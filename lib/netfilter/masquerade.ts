// Bridge ipMasq: one masquerade rule per network and family matching a set of pod addresses; ADD adds an element, DEL removes it.
import { parseIp } from '../ip/addr.ts';
import { NftBatch } from './batch.ts';
import { invalidValue } from './errors.ts';
import { nftExpr } from './expr.ts';
import { listTable } from './list.ts';
import { stableId } from './stable-id.ts';
import { WEFT_TABLE } from './table.ts';
import { formatAddress } from './validate.ts';
import type { NftRunOptions } from './types.ts';

/** Base chain shared by all bridge networks (nat postrouting, srcnat). */
export const MASQ_CHAIN = 'masq-postrouting';
const MULTICAST = { 4: '224.0.0.0/4', 6: 'ff00::/8' } as const;

/** Names used for one network: set per family, rule tag prefix per family. Network names may be long: hashed. */
export function masqNames(network: string): { set4: string; set6: string; tag4: string; tag6: string } {
  const id = stableId(network, 12);
  return { set4: `masq4-${id}`, set6: `masq6-${id}`, tag4: `weft-masq:${id}:v4:`, tag6: `weft-masq:${id}:v6:` };
}

/** What one pod attachment needs: its network, the network's subnets (not masqueraded to), its IPs. */
export interface PodMasqSpec {
  readonly network: string;
  /** CIDRs of the network (e.g. the host-local ranges); traffic to them keeps the pod's source. */
  readonly subnets: readonly string[];
  /** Pod addresses, with or without prefix length (`10.244.0.5/24` as in a CNI result). */
  readonly podIps: readonly string[];
  readonly containerId: string;
}

function hostPart(ip: string): string {
  const addr = ip.split('/')[0] ?? '';
  if (!isIPv4(addr) && !isIPv6(addr)) throw invalidValue('pod IP', ip, 'expected an IPv4 or IPv6 address');
  return addr;
}

function familyOf(cidr: string): 4 | 6 {
  return isIPv4(cidr.split('/')[0] ?? '') ? 4 : 6;
}

/**
 * Idempotent, in the caller's (host) netns unless netnsPath: ensures table, chain, the network's set
 * and its single rule per family, and adds the pod's IPs tagged with the container ID. One transaction.
 */
export function setupPodMasquerade(spec: PodMasqSpec, opts: NftRunOptions = {}): void {
  const n = masqNames(spec.network);
  const b = new NftBatch(WEFT_TABLE)
    .ensureTable()
    .ensureChain(MASQ_CHAIN, { type: 'nat', hook: 'postrouting', priority: 'srcnat', policy: 'accept' });
  for (const fam of [4, 6] as const) {
    const ips = spec.podIps.map(hostPart).filter((ip) => familyOf(ip) === fam);
    if (ips.length === 0) continue;
    const set = fam === 4 ? n.set4 : n.set6;
    const subnets = spec.subnets.filter((s) => familyOf(s) === fam).map((s) => formatAddress('subnet', s) ?? s);
    const skip = [...subnets, MULTICAST[fam]];
    const expr =
      fam === 4
        ? nftExpr`ip saddr @${set} ip daddr != ${skip} masquerade`
        : nftExpr`ip6 saddr @${set} ip6 daddr != ${skip} masquerade`;
    // The tag carries a hash of the rule, so a changed subnet list replaces the old rule.
    const version = stableId(expr.text, 8);
    const prefix = fam === 4 ? n.tag4 : n.tag6;
    b.ensureSet(set, { type: fam === 4 ? 'ipv4_addr' : 'ipv6_addr', comment: `bridge masquerade ${fam === 4 ? 'v4' : 'v6'}` });
    b.ensureRule(MASQ_CHAIN, expr, prefix + version, { replaces: prefix });
    for (const ip of ips) b.addElement(set, ip, { comment: spec.containerId });
  }
  b.apply(opts);
}

/**
 * Forgiving DEL, in the caller's (host) netns: removes the network's elements commented with the
 * container ID (no prevResult needed) plus any `podIps` given. Succeeds when nothing is there.
 * The rule and sets stay (other pods use them); deleteTable/GC removes them.
 */
export function teardownPodMasquerade(spec: { network: string; containerId: string; podIps?: readonly string[] }, opts: NftRunOptions = {}): void {
  const n = masqNames(spec.network);
  const state = listTable(WEFT_TABLE, opts);
  if (state === null) return;
  const b = new NftBatch(WEFT_TABLE);
  for (const set of [n.set4, n.set6]) {
    const s = state.sets.get(set);
    if (s === undefined) continue;
    const keys = new Set(s.elements.filter((e) => e.comment === spec.containerId).map((e) => String(e.key[0])));
    for (const ip of spec.podIps ?? []) {
      const addr = hostPart(ip);
      if ((familyOf(addr) === 4) === (set === n.set4)) keys.add(addr);
    }
    for (const k of keys) b.deleteElement(set, k);
  }
  b.apply(opts);
}

// node:net's isIPv4/isIPv6 would cost 4-12 ms of module loading on every plugin start.
function isIPv4(s: string): boolean {
  return parseIp(s)?.family === 4;
}
function isIPv6(s: string): boolean {
  return parseIp(s)?.family === 6;
}
