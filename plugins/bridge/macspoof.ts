// macspoofchk over nftables, O(1) in pods: weft's `bridge weft` table holds, per network, one base chain
// at bridge prerouting with ONE rule, `iifname @ports iifname . ether saddr != @pairs drop`, and two sets.
// An attachment is one element in each set (its host veth; its host veth . pod MAC), commented
// `<containerID>/<ifname>` so DEL and GC find them without prevResult. Steady state: both elements in one
// nf_tables transaction over netlink, in-process; `nft -f -` only creates the network's chain and sets.
import { netlinkElseNft } from '../../lib/netfilter/netlink-else-nft.ts';
import { NftBatch } from '../../lib/netfilter/batch.ts';
import { nftExpr } from '../../lib/netfilter/expr.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { WEFT_BRIDGE_TABLE } from '../../lib/netfilter/table.ts';
import { formatKeyBytes, parseKeyBytes } from '../../lib/netfilter/nfnl/key-codec.ts';
import { NfnlElemBatch, listSetElems } from '../../lib/netfilter/nfnl/set-elements.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { checkFailed } from './errors.ts';
import { elementComment, macSpoofNames } from './names.ts';

/** One attachment's macspoofchk: the host veth (a port of the network's bridge) and the pod's MAC. */
export interface MacSpoofSpec {
  network: string;
  containerId: string;
  ifName: string;
  hostIfName: string;
  podMac: string;
}

/** The two keys of an attachment: `ports` (ifname) and `pairs` (ifname . ether_addr, 16 + 8 bytes). */
export function macSpoofKeys(hostIfName: string, podMac: string): { port: Uint8Array; pair: Uint8Array } {
  return {
    port: formatKeyBytes('ifname', hostIfName),
    pair: formatKeyBytes(['ifname', 'ether_addr'], [hostIfName, podMac.toLowerCase()]),
  };
}

function addElements(spec: MacSpoofSpec): void {
  const n = macSpoofNames(spec.network);
  const k = macSpoofKeys(spec.hostIfName, spec.podMac);
  const comment = elementComment(spec.containerId, spec.ifName);
  // Both in one transaction: a port listed without its pair would drop every frame of the pod.
  new NfnlElemBatch(WEFT_BRIDGE_TABLE)
    .add(n.pairs, [{ key: k.pair, comment }])
    .add(n.ports, [{ key: k.port, comment }])
    .commit(keptNfnlSocket());
}

/**
 * Idempotent: the network's table, base chain (flushed and re-filled with its one rule) and sets, in one
 * `nft -f -` transaction. Priority `filter` (-200 in the bridge family) runs before the bridge forwards
 * or delivers the frame (net/bridge/br_input.c: NF_BR_PRE_ROUTING on ingress).
 */
export function ensureMacSpoofChain(network: string): void {
  const n = macSpoofNames(network);
  new NftBatch(WEFT_BRIDGE_TABLE)
    .ensureTable()
    .ensureSet(n.ports, { type: 'ifname', comment: 'bridge macspoofchk ports' })
    .ensureSet(n.pairs, { type: ['ifname', 'ether_addr'], comment: 'bridge macspoofchk allowed sources' })
    .ensureChain(n.chain, { type: 'filter', hook: 'prerouting', priority: 'filter', policy: 'accept' })
    .flushChain(n.chain)
    .appendRule(n.chain, nftExpr`iifname @${n.ports} iifname . ether saddr != @${n.pairs} drop`, { comment: `weft bridge macspoofchk ${network.slice(0, 60)}` })
    .apply();
}

/**
 * ADD step, in the node netns: lets the host veth carry only frames from the pod's MAC. One netlink
 * transaction when the network's sets exist; otherwise (the kernel refuses it as a whole with ENOENT)
 * the chain and sets are created with nft, then the elements are added again.
 */
export function setupMacSpoof(spec: MacSpoofSpec): void {
  netlinkElseNft({}, () => addElements(spec), () => {
    ensureMacSpoofChain(spec.network);
    addElements(spec);
  });
}

/** Forgiving DEL step, in the node netns: removes the attachment's elements, found by comment; gone is fine. */
export function teardownMacSpoof(spec: Pick<MacSpoofSpec, 'network' | 'containerId' | 'ifName'>): void {
  const comment = elementComment(spec.containerId, spec.ifName);
  gcMacSpoof(spec.network, (c) => c === comment);
}

/**
 * Deletes the network's macspoofchk elements whose comment `stale` selects (one transaction; none when
 * the table or sets are absent). Returns how many. In the node netns; used by DEL and GC.
 */
export function gcMacSpoof(network: string, stale: (comment: string) => boolean): number {
  const n = macSpoofNames(network);
  const sock = keptNfnlSocket();
  const b = new NfnlElemBatch(WEFT_BRIDGE_TABLE);
  for (const set of [n.pairs, n.ports]) {
    b.delete(set, (listSetElems(sock, WEFT_BRIDGE_TABLE, set) ?? []).filter((e) => e.comment !== undefined && stale(e.comment)));
  }
  const count = b.size;
  b.commit(sock);
  return count;
}

/** CHECK step, in the node netns: the chain holds its rule and each set holds exactly the attachment's element. */
export function checkMacSpoof(spec: MacSpoofSpec): void {
  const n = macSpoofNames(spec.network);
  const rules = listTable(WEFT_BRIDGE_TABLE, { terse: true })?.chains.get(n.chain)?.rules.length ?? 0;
  if (rules !== 1) throw checkFailed(`macspoofchk chain ${n.chain} has ${rules} rules`, 'expected 1 in table bridge weft');
  const comment = elementComment(spec.containerId, spec.ifName);
  const sock = keptNfnlSocket();
  const want = { [n.ports]: [spec.hostIfName], [n.pairs]: [spec.hostIfName, spec.podMac.toLowerCase()] };
  for (const [set, key] of Object.entries(want)) {
    const types = key.length === 1 ? (['ifname'] as const) : (['ifname', 'ether_addr'] as const);
    const have = (listSetElems(sock, WEFT_BRIDGE_TABLE, set) ?? []).filter((e) => e.comment === comment).map((e) => parseKeyBytes(types, e.key).join(' . '));
    if (have.length !== 1 || have[0] !== key.join(' . ')) {
      throw checkFailed(`macspoofchk element for ${comment} in ${set} is missing or wrong`, `want ${key.join(' . ')}, have ${have.join(', ') || 'none'}`);
    }
  }
}
