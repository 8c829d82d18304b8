// Check "forward": a forward chain of another table with policy drop (iptables -P FORWARD DROP, as
// Docker and hardened nodes set it, or a native nftables chain) drops pod traffic between nodes
// unless it accepts the cluster Network. weftd --iptables-forward-rules (the default) appends such
// accepts, tagged "weftd forward: ..."; flanneld's are tagged "flanneld forward". Reads the node's
// netns over netlink (nothing changes); the judgement is pure.
import { FORWARD_TAG, isForeignForwardChain, listForwardChainRules, wantedForwardRules, type ForwardChainRules, type ForwardNets } from '../../agent/inspect.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import type { CheckResult, Problem } from './problem.ts';

const FLANNELD_TAG = 'flanneld forward';

/** Judges the listed forward chains against the cluster networks (pure). */
export function checkForward(chains: readonly ForwardChainRules[], nets: ForwardNets): CheckResult {
  const check = 'forward';
  const problems: Problem[] = [];
  const drops: string[] = [];
  for (const { chain: c, rules } of chains) {
    if (!isForeignForwardChain(c) || c.policy !== 'drop') continue;
    const at = `${c.family} ${c.table} ${c.name}`;
    drops.push(at);
    const want = wantedForwardRules(c.family, nets);
    if (want.length === 0) continue;
    const comments = new Set(rules.map((r) => r.comment ?? ''));
    if (rules.some((r) => r.comment === FLANNELD_TAG)) continue;
    const missing = want.filter((w) => !comments.has(w.comment));
    if (missing.length === 0) continue;
    const nft = missing.map((w) => `nft add rule ${at} ${w.body.replace(/ comment ".*"$/, '')}`).join('; ');
    problems.push({
      check,
      detail: `${at} has policy drop and no accept of weftd's for ${missing.map((w) => w.comment.slice(FORWARD_TAG.length + 2)).join(', ')}: ` +
        'pod traffic to and from other nodes is dropped there unless that chain\'s own rules accept it',
      fix: `run weftd with --iptables-forward-rules (its default; remove --iptables-forward-rules=false / FLANNELD_IPTABLES_FORWARD_RULES=false), or accept the Network yourself: ${nft}`,
    });
  }
  return { check, problems, facts: { dropChains: drops.join(', ') } };
}

/** The check on this node: Network/IPv6Network from the net-conf, else subnet.env; skipped when neither is known. */
export function checkForwardOnNode(netConf: { network: string; ipv6Network?: string | undefined } | null, env: { network: string; ipv6Network?: string } | null): CheckResult {
  const n4 = netConf?.network ?? env?.network.split(',')[0];
  const n6 = netConf !== null ? netConf.ipv6Network : env?.ipv6Network?.split(',')[0];
  const nets: ForwardNets = { ...(n4 !== undefined && n4 !== '' ? { network4: n4 } : {}), ...(n6 !== undefined && n6 !== '' ? { network6: n6 } : {}) };
  if (nets.network4 === undefined && nets.network6 === undefined) return { check: 'forward', problems: [], facts: {}, skipped: 'needs the cluster Network (net-conf or subnet.env)' };
  try {
    return checkForward(listForwardChainRules(keptNfnlSocket()), nets);
  } catch (e) {
    return { check: 'forward', problems: [], facts: {}, skipped: `cannot list the forward chains: ${(e as Error).message}` };
  }
}
