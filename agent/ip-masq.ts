// weftd --ip-masq: masquerade traffic from the cluster Network to outside it; never pod to pod, multicast, or kube-proxy-marked traffic.
import { familyOfText } from '../lib/ip/addr.ts';
import { NftBatch } from '../lib/netfilter/batch.ts';
import { nftExpr } from '../lib/netfilter/expr.ts';
import { WEFT_TABLE } from '../lib/netfilter/table.ts';
import { formatAddress } from '../lib/netfilter/validate.ts';
import { invalidValue } from '../lib/netfilter/errors.ts';
import type { NftRunOptions } from '../lib/netfilter/types.ts';

/** Base chain owned by weftd alone (nat postrouting, srcnat), so it may be flushed and rebuilt. */
export const IPMASQ_CHAIN = 'ipmasq-postrouting';

/** kube-proxy's KUBE-MARK-MASQ bit: kube-proxy masquerades those packets itself, we leave them alone. */
export const KUBE_PROXY_MASQ_MARK = 0x4000;

/** The cluster networks (flannel's Network / IPv6Network). */
export interface IpMasqSpec {
  readonly network4?: string;
  readonly network6?: string;
}

/**
 * The networks --ip-masq covers for a net-conf: Network and, with EnableIPv6, IPv6Network (flannel's
 * SetupAndEnsureMasqRules takes both and adds the IPv6 rules only for a non-empty IPv6Network).
 */
export function masqNetworks(conf: { network: string; ipv6Network?: string | undefined }): IpMasqSpec {
  return {
    ...(conf.network !== '' ? { network4: conf.network } : {}),
    ...(conf.ipv6Network !== undefined ? { network6: conf.ipv6Network } : {}),
  };
}

/**
 * Idempotent, in the node's (host) netns unless netnsPath: rebuilds the ip-masq chain in one
 * transaction (add chain, flush, rules), so a restart or a changed Network converges without leftovers.
 */
export function ensureIpMasq(spec: IpMasqSpec, opts: NftRunOptions = {}): void {
  const net4 = spec.network4 === undefined ? undefined : formatAddress('network4', spec.network4);
  const net6 = spec.network6 === undefined ? undefined : formatAddress('network6', spec.network6);
  if (spec.network4 !== undefined && (net4 === undefined || familyOfText(net4) !== 4)) throw invalidValue('network4', spec.network4, 'expected an IPv4 CIDR');
  if (spec.network6 !== undefined && (net6 === undefined || familyOfText(net6) !== 6)) throw invalidValue('network6', spec.network6, 'expected an IPv6 CIDR');
  const b = new NftBatch(WEFT_TABLE)
    .ensureTable()
    .ensureChain(IPMASQ_CHAIN, { type: 'nat', hook: 'postrouting', priority: 'srcnat', policy: 'accept' })
    .flushChain(IPMASQ_CHAIN)
    .ensureRule(IPMASQ_CHAIN, nftExpr`meta mark & ${KUBE_PROXY_MASQ_MARK} == ${KUBE_PROXY_MASQ_MARK} return`, 'ipmasq kube-proxy-mark');
  if (net4 !== undefined) {
    b.ensureRule(IPMASQ_CHAIN, nftExpr`ip saddr ${net4} ip daddr ${net4} return`, 'ipmasq v4 pod-to-pod');
    b.ensureRule(IPMASQ_CHAIN, nftExpr`ip saddr ${net4} ip daddr != ${'224.0.0.0/4'} masquerade fully-random`, 'ipmasq v4 outbound');
  }
  if (net6 !== undefined) {
    b.ensureRule(IPMASQ_CHAIN, nftExpr`ip6 saddr ${net6} ip6 daddr ${net6} return`, 'ipmasq v6 pod-to-pod');
    b.ensureRule(IPMASQ_CHAIN, nftExpr`ip6 saddr ${net6} ip6 daddr != ${'ff00::/8'} masquerade fully-random`, 'ipmasq v6 outbound');
  }
  b.apply(opts);
}

/** Removes the ip-masq chain; succeeds when absent. Host netns unless netnsPath. */
export function teardownIpMasq(opts: NftRunOptions = {}): void {
  new NftBatch(WEFT_TABLE).deleteChain(IPMASQ_CHAIN).apply(opts);
}
