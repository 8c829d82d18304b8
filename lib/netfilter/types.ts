// Shared types of the nftables layer: families, object specs and the parsed listing.

/**
 * nftables address family of a table; weft uses `inet` (one table covers IPv4 and IPv6), and `bridge`
 * for frames crossing a Linux bridge (the bridge plugin's macspoofchk).
 */
export type NftFamily = 'ip' | 'ip6' | 'inet' | 'bridge';

/** Element data types we create sets and maps with (nft `type` keyword values). */
export type NftDataType =
  | 'ipv4_addr'
  | 'ipv6_addr'
  | 'inet_proto'
  | 'inet_service'
  | 'ether_addr'
  | 'ifname'
  | 'mark'
  | 'verdict';

/** One value in an element key or data: an address, prefix, number or whitelisted keyword. */
export type NftAtom = string | number;

/** A set element key (or map data): one atom, or several for a concatenation (`a . b`). */
export type NftKey = NftAtom | readonly NftAtom[];

/** Identifies a table owned by weft. */
export interface NftTableRef {
  readonly family: NftFamily;
  readonly name: string;
}

/** Base-chain attributes (`type nat hook postrouting priority srcnat; policy accept;`). */
export interface NftBaseChainSpec {
  readonly type: 'filter' | 'nat' | 'route';
  readonly hook: 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
  /** A number or one of nft's standard names (see nft(8) "CHAINS", priority table). */
  readonly priority: number | 'raw' | 'mangle' | 'dstnat' | 'filter' | 'security' | 'srcnat';
  readonly policy?: 'accept' | 'drop';
}

/** Set attributes for ensureSet. */
export interface NftSetSpec {
  /** One type, or several for a concatenated key. */
  readonly type: NftDataType | readonly NftDataType[];
  readonly flags?: readonly ('interval' | 'timeout' | 'constant' | 'dynamic')[];
  readonly comment?: string;
}

/** Map attributes for ensureMap: key type(s) and data type(s) (`verdict` for a vmap). */
export interface NftMapSpec extends NftSetSpec {
  readonly data: NftDataType | readonly NftDataType[];
}

/** One element as listed by `nft -j list`: key atoms, map data, comment. */
export interface NftElementState {
  readonly key: readonly NftAtom[];
  /** Map data atoms; a verdict is rendered as text (`accept`, `jump name`). */
  readonly data?: readonly NftAtom[];
  readonly comment?: string;
}

/** A set or map as listed. Elements are empty when listed tersely (`nft -t`). */
export interface NftSetState {
  readonly name: string;
  readonly kind: 'set' | 'map';
  readonly handle: number;
  readonly type: readonly string[];
  readonly dataType?: string;
  readonly flags: readonly string[];
  readonly comment?: string;
  readonly elements: readonly NftElementState[];
}

/** A rule as listed: its handle, comment tag and raw JSON expressions (kept, not interpreted). */
export interface NftRuleState {
  readonly handle: number;
  readonly comment?: string;
  readonly expr: readonly unknown[];
}

/** A chain as listed, with its rules in order. */
export interface NftChainState {
  readonly name: string;
  readonly handle: number;
  readonly type?: string;
  readonly hook?: string;
  readonly prio?: number;
  readonly policy?: string;
  readonly rules: NftRuleState[];
}

/** A whole table as listed by `nft -j list table`. */
export interface NftTableState extends NftTableRef {
  readonly handle: number;
  readonly sets: Map<string, NftSetState>;
  readonly chains: Map<string, NftChainState>;
  /** Named counter objects (absent from listings parsed before counters were read). */
  readonly counters?: Map<string, { readonly packets: number; readonly bytes: number }>;
}

/** Where `nft` runs: by default in the caller's (thread's) network namespace. */
export interface NftRunOptions {
  /** Run via `nsenter --net=<path>` in that namespace (e.g. /run/netns/x, /proc/<pid>/ns/net). */
  readonly netnsPath?: string;
  /** nft binary; default: first of /usr/sbin/nft, /sbin/nft, /usr/bin/nft, else `nft` on PATH. */
  readonly nftBinary?: string;
  /** Kill nft after this many ms (default WEFT_STALL_TIMEOUT_MS, else 10000; the failure is code 11). */
  readonly timeoutMs?: number;
}
