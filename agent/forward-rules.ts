// weftd --iptables-forward-rules (default on, flanneld's flag): accept rules for traffic from and to
// the cluster Network (and IPv6Network) in other tables' forward chains whose policy is drop, in the
// node's netns. Docker and hardened nodes set `iptables -P FORWARD DROP` (iptables-nft's `ip filter
// FORWARD`), others write a native `inet filter forward { policy drop; }`. In nftables an accept ends
// only its own base chain, so an accept in weft's table cannot override such a chain: the rule must be
// in the foreign chain itself, as flanneld appends its FORWARD accepts. Every rule carries a comment
// starting with FORWARD_TAG, so weftd finds exactly its own (re-adds them after an iptables-restore or
// `nft flush`, removes them when the flag is off or the policy is no longer drop).
import { listBaseChains, listRuleComments, type NfnlBaseChain } from '../lib/netfilter/nfnl/chains.ts';
import { keptNfnlSocket, type NfnlSocket } from '../lib/netfilter/nfnl/socket.ts';
import { runNft } from '../lib/netfilter/run.ts';
import { formatAddress } from '../lib/netfilter/validate.ts';
import { invalidValue } from '../lib/netfilter/errors.ts';
import { familyOfText } from '../lib/ip/addr.ts';

/** The start of every comment of weftd's forward accepts (iptables shows `-m comment --comment "weftd forward: ..."`). */
export const FORWARD_TAG = 'weftd forward';

/** How often the rules are checked (flanneld's --iptables-resync default, 5 s); a check that finds them in place spawns nothing. */
export const FORWARD_RESYNC_MS = 5000;

/** The cluster networks the accepts cover (Network; IPv6Network with EnableIPv6). */
export interface ForwardNets {
  readonly network4?: string;
  readonly network6?: string;
}

/** A forward base chain of another table with the handles and comments of its rules. */
export interface ForwardChainRules {
  chain: NfnlBaseChain;
  rules: ReadonlyArray<{ handle: bigint; comment?: string }>;
}

// Names written into the script unquoted: what iptables-nft, firewalld and hand-written tables use.
const PLAIN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** True for a filter chain at the forward hook of an ip/ip6/inet table that is not weft's own (pure). */
export function isForeignForwardChain(c: NfnlBaseChain): boolean {
  return c.hook === 'forward' && c.type === 'filter' && c.family !== 'bridge' && !c.table.startsWith('weft') && PLAIN.test(c.table) && PLAIN.test(c.name);
}

/** The accepts one chain of `family` needs: comment -> rule body (pure). ip: IPv4 only, ip6: IPv6 only, inet: both. */
export function wantedForwardRules(family: NfnlBaseChain['family'], nets: ForwardNets): Array<{ comment: string; body: string }> {
  const out: Array<{ comment: string; body: string }> = [];
  const add = (proto: 'ip' | 'ip6', net: string): void => {
    for (const [dir, key] of [['from', 'saddr'], ['to', 'daddr']] as const) {
      const comment = `${FORWARD_TAG}: ${dir} ${net}`;
      out.push({ comment, body: `${proto} ${key} ${net} counter accept comment "${comment}"` });
    }
  };
  if (nets.network4 !== undefined && (family === 'ip' || family === 'inet')) add('ip', nets.network4);
  if (nets.network6 !== undefined && (family === 'ip6' || family === 'inet')) add('ip6', nets.network6);
  return out;
}

/** Validated networks in nft's text form; throws naming the bad one. */
export function normalizeForwardNets(nets: ForwardNets): ForwardNets {
  const one = (field: string, v: string | undefined, fam: 4 | 6): string | undefined => {
    if (v === undefined) return undefined;
    const f = formatAddress(field, v);
    if (f === undefined || !f.includes('/') || familyOfText(f) !== fam) throw invalidValue(field, v, `expected an IPv${fam} CIDR`);
    return f;
  };
  const n4 = one('network4', nets.network4, 4);
  const n6 = one('network6', nets.network6, 6);
  return { ...(n4 !== undefined ? { network4: n4 } : {}), ...(n6 !== undefined ? { network6: n6 } : {}) };
}

/**
 * The nft script lines that converge the chains (pure): a chain with policy drop gets exactly the
 * wanted accepts (appended, after the chain's own rules, as flanneld's `-A FORWARD`); any other chain,
 * or every chain when `enabled` is false, keeps none of weftd's. A chain already right yields nothing;
 * otherwise weftd's rules there are deleted by handle and the wanted ones added, in one transaction.
 */
export function planForwardRules(chains: readonly ForwardChainRules[], nets: ForwardNets, enabled: boolean): string[] {
  const lines: string[] = [];
  for (const { chain: c, rules } of chains) {
    if (!isForeignForwardChain(c)) continue;
    const ours = rules.filter((r) => r.comment?.startsWith(FORWARD_TAG) === true);
    const want = enabled && c.policy === 'drop' ? wantedForwardRules(c.family, nets) : [];
    const have = ours.map((r) => r.comment ?? '').sort();
    const need = want.map((w) => w.comment).sort();
    if (have.length === need.length && have.every((x, i) => x === need[i])) continue;
    const at = `${c.family} ${c.table} ${c.name}`;
    for (const r of ours) lines.push(`delete rule ${at} handle ${r.handle}`);
    for (const w of want) lines.push(`add rule ${at} ${w.body}`);
  }
  return lines;
}

/** The foreign forward chains of the socket's netns with their rules: one chain dump plus one rule dump per chain. */
export function listForwardChainRules(sock: NfnlSocket): ForwardChainRules[] {
  return listBaseChains(sock).filter(isForeignForwardChain).map((chain) => ({ chain, rules: listRuleComments(sock, chain.family, chain.table, chain.name) }));
}

/** What one ensure did: the script lines applied (none when everything was in place). */
export interface ForwardOutcome {
  lines: string[];
}

/**
 * Idempotent, in the calling thread's netns (the node's): converges weftd's accepts (enabled) or
 * removes them (disabled). Reads over netlink; spawns nft only when something must change.
 */
export function ensureForwardRules(nets: ForwardNets, enabled: boolean, sock: NfnlSocket = keptNfnlSocket()): ForwardOutcome {
  const lines = planForwardRules(listForwardChainRules(sock), normalizeForwardNets(nets), enabled);
  if (lines.length > 0) runNft(['-f', '-'], lines.map((l) => `${l}\n`).join(''));
  return { lines };
}

/** Removes every accept weftd added, from every foreign forward chain (node netns). */
export function teardownForwardRules(sock: NfnlSocket = keptNfnlSocket()): ForwardOutcome {
  return ensureForwardRules({}, false, sock);
}
