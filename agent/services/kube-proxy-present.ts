// Refuses two Service proxies on one node: kube-proxy's nftables tables or its iptables KUBE-SERVICES
// chain mean kube-proxy is (or was) running here, and both would DNAT the same ClusterIPs.
import { runNft } from '../../lib/netfilter/run.ts';
import { listJsonOrNull } from '../../lib/netfilter/list-json.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';

/** What of kube-proxy's is on the node (empty: nothing), in the caller's netns or opts.netnsPath. */
export function kubeProxyTraces(opts: NftRunOptions = {}): string[] {
  const found: string[] = [];
  const tables = runNft(['list', 'tables'], undefined, opts).stdout.split('\n').map((l) => l.trim());
  for (const t of ['table ip kube-proxy', 'table ip6 kube-proxy', 'table inet kube-proxy']) if (tables.includes(t)) found.push(t);
  for (const fam of ['ip', 'ip6'] as const) {
    if (!tables.includes(`table ${fam} nat`)) continue;
    if (listJsonOrNull(['chain', fam, 'nat', 'KUBE-SERVICES'], opts) !== null) found.push(`chain KUBE-SERVICES in table ${fam} nat`);
  }
  return found;
}

/** Throws a clear error when kube-proxy's tables or chains are present. */
export function refuseBesideKubeProxy(opts: NftRunOptions = {}): void {
  const found = kubeProxyTraces(opts);
  if (found.length > 0) {
    throw new Error(`--service-proxy: kube-proxy's rules are on this node (${found.join(', ')}); two Service proxies would both DNAT the same ClusterIPs. ` +
      'Remove kube-proxy (its DaemonSet, then `kube-proxy --cleanup` or delete those tables/chains) or run weftd without --service-proxy.');
  }
}
