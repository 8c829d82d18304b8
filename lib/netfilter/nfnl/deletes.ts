// Removal commands over nf_tables netlink (nf_tables.h): a rule by handle, a chain, a set, a named
// counter. Pure payload builders for one batch; a chain deleted without NLM_F_NONREC takes its rules
// with it, and the kernel refuses (EBUSY) while a rule outside the batch still jumps to it.
import { attrStr, concat, formatAttr, view } from '../../netlink/attrs.ts';
import { validateFamily, validateName } from '../validate.ts';
import type { NftTableRef } from '../types.ts';
import { formatNfgenmsg, nfproto } from './elem.ts';
import type { NfnlCommand } from './socket.ts';

// enum nf_tables_msg_types and the attributes of each (nf_tables.h).
const NFT_MSG_DELCHAIN = 5;
const NFT_MSG_DELRULE = 8;
const NFT_MSG_DELSET = 11;
const NFT_MSG_DELOBJ = 20;
const NFTA_TABLE = 1; // NFTA_CHAIN_TABLE, NFTA_RULE_TABLE, NFTA_SET_TABLE, NFTA_OBJ_TABLE
const NFTA_CHAIN_NAME = 3;
const NFTA_RULE_CHAIN = 2;
const NFTA_RULE_HANDLE = 3;
const NFTA_SET_NAME = 2;
const NFTA_OBJ_NAME = 2;
const NFTA_OBJ_TYPE = 3;
const NFT_OBJECT_COUNTER = 1;

function head(t: NftTableRef): Uint8Array[] {
  return [formatNfgenmsg(nfproto(validateFamily(t.family))), attrStr(NFTA_TABLE, validateName('table', t.name))];
}

/** Deletes one rule of `chain` by its kernel handle. */
export function delRuleCommand(t: NftTableRef, chain: string, handle: bigint): NfnlCommand {
  const h = new Uint8Array(8);
  view(h).setBigUint64(0, handle, false);
  return { msg: NFT_MSG_DELRULE, payload: concat([...head(t), attrStr(NFTA_RULE_CHAIN, validateName('chain', chain)), formatAttr(NFTA_RULE_HANDLE, h)]) };
}

/** Deletes a chain and its rules (nothing outside the batch may still jump to it). */
export function delChainCommand(t: NftTableRef, chain: string): NfnlCommand {
  return { msg: NFT_MSG_DELCHAIN, payload: concat([...head(t), attrStr(NFTA_CHAIN_NAME, validateName('chain', chain))]) };
}

/** Deletes a set (no rule may still look it up). */
export function delSetCommand(t: NftTableRef, set: string): NfnlCommand {
  return { msg: NFT_MSG_DELSET, payload: concat([...head(t), attrStr(NFTA_SET_NAME, validateName('set', set))]) };
}

/** Deletes a named counter (no rule may still refer to it). */
export function delCounterCommand(t: NftTableRef, counter: string): NfnlCommand {
  const ty = new Uint8Array(4);
  view(ty).setUint32(0, NFT_OBJECT_COUNTER, false);
  return { msg: NFT_MSG_DELOBJ, payload: concat([...head(t), attrStr(NFTA_OBJ_NAME, validateName('counter', counter)), formatAttr(NFTA_OBJ_TYPE, ty)]) };
}
