// Chain and rule listings over nf_tables netlink (NFT_MSG_GETCHAIN / GETRULE dumps, nf_tables.h):
// the base chains of every table with hook, priority and policy, and the comments of one chain's
// rules. Read-only; lets a plugin see in-process whether other tables' chains need a rule.
import { attrMap, attrStr, concat, getStr, parseAttrs, view } from '../../netlink/attrs.ts';
import { isNotFound } from '../../netlink/errors.ts';
import { formatNfgenmsg, nfproto } from './elem.ts';
import type { NftFamily } from '../types.ts';
import { NFPROTO_BRIDGE, NFPROTO_INET, NFPROTO_IPV4, NFPROTO_IPV6, NFT_MSG_GETCHAIN, NFT_MSG_GETRULE } from './constants.ts';
import { parseUdata } from './udata.ts';
import type { NfnlSocket } from './socket.ts';

// enum nft_chain_attributes, nft_hook_attributes, nft_rule_attributes (nf_tables.h).
const NFTA_CHAIN_TABLE = 1;
const NFTA_CHAIN_NAME = 3;
const NFTA_CHAIN_HOOK = 4;
const NFTA_CHAIN_POLICY = 5;
const NFTA_CHAIN_TYPE = 7;
const NFTA_HOOK_HOOKNUM = 1;
const NFTA_HOOK_PRIORITY = 2;
const NFTA_RULE_TABLE = 1;
const NFTA_RULE_CHAIN = 2;
const NFTA_RULE_HANDLE = 3;
const NFTA_RULE_USERDATA = 7;
// enum nftnl_udata_rule_types (libnftnl udata.h): nft keeps a rule's comment here, NUL-terminated.
const NFTNL_UDATA_RULE_COMMENT = 0;
// enum nf_inet_hooks (linux/netfilter.h).
const HOOKS = ['prerouting', 'input', 'forward', 'output', 'postrouting'] as const;

/** A base chain as the kernel lists it. */
export interface NfnlBaseChain {
  family: NftFamily;
  table: string;
  name: string;
  /** 'filter', 'nat', 'route'. */
  type: string;
  hook: string;
  priority: number;
  policy: 'accept' | 'drop';
}

const FAMILY_OF = new Map<number, NftFamily>([[NFPROTO_INET, 'inet'], [NFPROTO_IPV4, 'ip'], [NFPROTO_IPV6, 'ip6'], [NFPROTO_BRIDGE, 'bridge']]);

/** Parses one NFT_MSG_NEWCHAIN payload; null for a regular chain or an unknown family. Pure. */
export function parseBaseChain(payload: Uint8Array): NfnlBaseChain | null {
  const family = FAMILY_OF.get(payload[0] ?? 0);
  const m = attrMap(parseAttrs(payload.subarray(4)));
  const hook = m.get(NFTA_CHAIN_HOOK);
  if (family === undefined || hook === undefined) return null;
  const h = attrMap(parseAttrs(hook.data));
  const num = h.get(NFTA_HOOK_HOOKNUM);
  const prio = h.get(NFTA_HOOK_PRIORITY);
  const policy = m.get(NFTA_CHAIN_POLICY);
  const be32 = (d: Uint8Array | undefined): number => (d === undefined || d.length < 4 ? 0 : view(d).getInt32(0, false));
  const table = m.get(NFTA_CHAIN_TABLE);
  const name = m.get(NFTA_CHAIN_NAME);
  const type = m.get(NFTA_CHAIN_TYPE);
  return {
    family,
    table: table === undefined ? '' : getStr(table),
    name: name === undefined ? '' : getStr(name),
    type: type === undefined ? 'filter' : getStr(type),
    hook: HOOKS[be32(num?.data)] ?? `hook${be32(num?.data)}`,
    priority: be32(prio?.data),
    // NF_DROP is 0, NF_ACCEPT 1 (linux/netfilter.h); a base chain without the attribute accepts.
    policy: policy !== undefined && be32(policy.data) === 0 ? 'drop' : 'accept',
  };
}

/** Every base chain of every table in the socket's netns. */
export function listBaseChains(sock: NfnlSocket): NfnlBaseChain[] {
  return sock
    .dump('list chains', NFT_MSG_GETCHAIN, formatNfgenmsg(0))
    .map((m) => parseBaseChain(m.payload))
    .filter((c): c is NfnlBaseChain => c !== null);
}

/** The comment of one NFT_MSG_NEWRULE payload, and its handle. Pure. */
export function parseRuleComment(payload: Uint8Array): { handle: bigint; comment?: string } {
  const m = attrMap(parseAttrs(payload.subarray(4)));
  const h = m.get(NFTA_RULE_HANDLE);
  const handle = h === undefined || h.data.length < 8 ? 0n : view(h.data).getBigUint64(0, false);
  const ud = m.get(NFTA_RULE_USERDATA);
  const tlv = ud === undefined ? undefined : parseUdata(ud.data).find((t) => t.type === NFTNL_UDATA_RULE_COMMENT);
  if (tlv === undefined) return { handle };
  const nul = tlv.value.indexOf(0);
  return { handle, comment: Buffer.from(tlv.value.subarray(0, nul < 0 ? tlv.value.length : nul)).toString('utf8') };
}

/** The rules of one chain (handle and comment); empty when the chain or table does not exist. */
export function listRuleComments(sock: NfnlSocket, family: NftFamily, table: string, chain: string): { handle: bigint; comment?: string }[] {
  const payload = concat([formatNfgenmsg(nfproto(family)), attrStr(NFTA_RULE_TABLE, table), attrStr(NFTA_RULE_CHAIN, chain)]);
  try {
    return sock.dump(`list rules of ${family} ${table} ${chain}`, NFT_MSG_GETRULE, payload).map((m) => parseRuleComment(m.payload));
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}
