// kube-proxy's chains by name, and a cheap probe for one chain in a node namespace (run from the
// bench process): a netlink dump of one chain's rules, which the kernel answers by a hash look-up of
// the name, so it costs microseconds at any number of Services, where `nft get element` or
// `iptables -S` read the whole table (seconds at 5,000 Services). kube-proxy writes a Service's and
// its endpoints' chains in the same transaction as the map elements or jumps that use them, so a
// chain's existence means the change is in the kernel. iptables here is iptables-nft: its chains are
// nf_tables chains of table ip nat.
import { createHash } from 'node:crypto';
import { listRuleComments, NfnlSocket } from '../../lib/netfilter/nfnl/index.ts';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import type { ClusterNode } from '../../testkit/cluster.ts';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first `chars` characters of base32 (RFC 4648, as Go's base32.StdEncoding) of sha256(s). Pure. */
function hash32(s: string, chars: number): string {
  let bits = 0;
  let v = 0;
  let out = '';
  for (const b of createHash('sha256').update(s).digest()) {
    v = ((v << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < chars) { out += B32[(v >>> (bits - 5)) & 31]; bits -= 5; }
  }
  return out;
}

/** kube-proxy iptables mode's endpoint chain: KUBE-SEP- and 16 characters of base32(sha256(port name + protocol + endpoint)). Pure. */
export function sepChain(servicePortName: string, endpoint: string): string {
  return `KUBE-SEP-${hash32(`${servicePortName}tcp${endpoint}`, 16)}`;
}

/** kube-proxy iptables mode's Service chain: KUBE-SVC- and 16 characters of base32(sha256(port name + protocol)). Pure. */
export function svcChain(servicePortName: string): string {
  return `KUBE-SVC-${hash32(`${servicePortName}tcp`, 16)}`;
}

/** kube-proxy nftables mode's names: 8 hash characters, a dash, then the readable base (names here are far below its 240-character cut). Pure. */
function nftName(prefix: string, base: string): string {
  return `${prefix}${hash32(base, 8)}-${base}`;
}

/** kube-proxy nftables mode's Service chain for TCP port `port` of namespace/name: service-HASH-ns/name/tcp/port. Pure. */
export function nftServiceChain(ns: string, name: string, port: string): string {
  return nftName('service-', `${ns}/${name}/tcp/${port}`);
}

/** kube-proxy nftables mode's endpoint chain: endpoint-HASH-ns/name/tcp/port__ip/targetPort. Pure. */
export function nftEndpointChain(ns: string, name: string, port: string, ip: string, targetPort: number): string {
  return nftName('endpoint-', `${ns}/${name}/tcp/${port}__${ip}/${targetPort}`);
}

/** Where a kube-proxy mode's chains live: [family, table]. */
export function chainTable(mode: 'nftables' | 'iptables'): ['ip', string] {
  return mode === 'nftables' ? ['ip', 'kube-proxy'] : ['ip', 'nat'];
}

/** Polls for chains in one node namespace; each waiter resolves with the wall ms of the poll that first saw its chain. */
export interface ChainPoller {
  /** How it sees a chain, for the rows ("chain poll every 20 ms"). */
  readonly what: string;
  /** True when `chain` of ip `table` exists now and has rules (one dump). */
  exists(table: string, chain: string): boolean;
  /** Wall ms at which the chain is first seen, polled every `intervalMs` (rejects after timeoutMs). */
  next(table: string, chain: string, timeoutMs: number): Promise<number>;
  close(): void;
}

/** Opens the probe's netfilter socket in `n`'s namespace; `intervalMs` is the poll period (a detection is late by at most that much). */
export function pollChains(n: ClusterNode, intervalMs: number): ChainPoller {
  const h = openNetns(n.path);
  let sock: NfnlSocket;
  try {
    sock = withNetns(h, () => NfnlSocket.open());
  } finally {
    h.close();
  }
  const exists = (table: string, chain: string): boolean => listRuleComments(sock, 'ip', table, chain).length > 0;
  const waiters = new Set<{ table: string; chain: string; done: (at: number) => void }>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const tick = (): void => {
    for (const w of waiters) {
      if (!exists(w.table, w.chain)) continue;
      waiters.delete(w);
      w.done(performance.timeOrigin + performance.now());
    }
    if (waiters.size === 0 && timer !== undefined) { clearInterval(timer); timer = undefined; }
  };
  return {
    what: `chain poll every ${intervalMs} ms`,
    exists,
    next: (table, chain, timeoutMs) => new Promise((resolve, reject) => {
      const w = { table, chain, done: (at: number) => { clearTimeout(limit); resolve(at); } };
      const limit = setTimeout(() => { waiters.delete(w); reject(new Error(`chain ${table} ${chain} not seen in ${timeoutMs} ms`)); }, timeoutMs);
      waiters.add(w);
      timer ??= setInterval(tick, intervalMs);
    }),
    close: () => {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      waiters.clear();
      sock.close();
    },
  };
}
