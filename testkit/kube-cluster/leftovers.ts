// Per-pod state a kubelet node keeps while pods exist, counted from the machine (read only): host-local
// allocations in the node's /var/lib/cni/networks, libcni's result cache, pod veths in the node
// namespace, pod network namespaces in the node's /run/netns, and elements of nft sets and maps.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ipJson } from '../netns.ts';
import { nsExec } from '../topology.ts';
import type { KubeNode } from './node.ts';

/** Counts of per-pod state on one node. */
export interface NodeLeftovers {
  addresses: string[];
  cniResults: number;
  veths: number;
  podNetns: number;
  nftElements: number;
}

const IP_FILE = /^\d+\.\d+\.\d+\.\d+$|^[0-9a-f]*:[0-9a-f:]*$/;

/** Reads the counts of `n`. */
export async function nodeLeftovers(n: KubeNode): Promise<NodeLeftovers> {
  const nets = join(n.varLib, 'cni', 'networks');
  const addresses = existsSync(nets) ? readdirSync(nets).flatMap((net) => readdirSync(join(nets, net)).filter((f) => IP_FILE.test(f))) : [];
  const results = join(n.varLib, 'cni', 'results');
  const cniResults = existsSync(results) ? readdirSync(results).length : 0;
  const links = await ipJson<Array<{ ifname: string; link_type?: string; linkinfo?: { info_kind?: string } }>>(n.netns, ['-d', 'link', 'show', 'type', 'veth']);
  const veths = links.filter((l) => l.ifname !== 'eth0').length;
  const netnsDir = join(n.runDir, 'netns');
  const podNetns = existsSync(netnsDir) ? readdirSync(netnsDir).filter((f) => f.startsWith('cni-')).length : 0;
  const nft = await nsExec(n.netns, ['nft', '-j', 'list', 'ruleset']);
  let nftElements = 0;
  if (nft.code === 0 && nft.stdout.trim() !== '') {
    const doc = JSON.parse(nft.stdout) as { nftables: Array<{ set?: { elem?: unknown[] }; map?: { elem?: unknown[] } }> };
    for (const o of doc.nftables) nftElements += (o.set?.elem?.length ?? 0) + (o.map?.elem?.length ?? 0);
  }
  return { addresses, cniResults, veths, podNetns, nftElements };
}

/** "3 addresses, 3 cni results, 3 veths, 3 pod netns, 0 nft elements" */
export function formatLeftovers(l: NodeLeftovers): string {
  return `${l.addresses.length} addresses, ${l.cniResults} cni results, ${l.veths} veths, ${l.podNetns} pod netns, ${l.nftElements} nft elements`;
}
