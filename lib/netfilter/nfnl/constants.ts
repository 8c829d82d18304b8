// nf_tables netlink numbers used by weft's in-process element path. Values and names come from the
// kernel UAPI headers linux/netlink.h, linux/netfilter/nfnetlink.h and linux/netfilter/nf_tables.h,
// and from libnftnl's include/udata.h / set_elem.c for the user-data TLV layout nft writes.

/** Protocol number of the netfilter netlink family (linux/netlink.h NETLINK_NETFILTER). */
export const NETLINK_NETFILTER = 12;

/** nfnetlink subsystem of nf_tables (nfnetlink.h NFNL_SUBSYS_NFTABLES); the high byte of nlmsg_type. */
export const NFNL_SUBSYS_NFTABLES = 10;

/** Batch delimiters (nfnetlink.h): NLMSG_MIN_TYPE and the next one; res_id names the subsystem. */
export const NFNL_MSG_BATCH_BEGIN = 0x10;
export const NFNL_MSG_BATCH_END = 0x11;

/** struct nfgenmsg version (nfnetlink.h NFNETLINK_V0). */
export const NFNETLINK_V0 = 0;

/** enum nf_tables_msg_types (nf_tables.h), the low byte of nlmsg_type. */
export const NFT_MSG_GETCHAIN = 4;
export const NFT_MSG_GETRULE = 7;
export const NFT_MSG_NEWSETELEM = 12;
export const NFT_MSG_GETSETELEM = 13;
export const NFT_MSG_DELSETELEM = 14;

/** enum nft_set_elem_list_attributes (nf_tables.h). */
export const NFTA_SET_ELEM_LIST_TABLE = 1;
export const NFTA_SET_ELEM_LIST_SET = 2;
export const NFTA_SET_ELEM_LIST_ELEMENTS = 3;

/** enum nft_list_attributes (nf_tables.h): one element inside NFTA_SET_ELEM_LIST_ELEMENTS. */
export const NFTA_LIST_ELEM = 1;

/** enum nft_set_elem_attributes (nf_tables.h). */
export const NFTA_SET_ELEM_KEY = 1;
export const NFTA_SET_ELEM_DATA = 2;
export const NFTA_SET_ELEM_FLAGS = 3;
export const NFTA_SET_ELEM_TIMEOUT = 4;
export const NFTA_SET_ELEM_EXPIRATION = 5;
export const NFTA_SET_ELEM_USERDATA = 6;
export const NFTA_SET_ELEM_KEY_END = 9;

/** enum nft_set_elem_flags (nf_tables.h): the element closes an interval (rbtree interval sets). */
export const NFT_SET_ELEM_INTERVAL_END = 0x1;

/** enum nft_data_attributes (nf_tables.h). */
export const NFTA_DATA_VALUE = 1;
export const NFTA_DATA_VERDICT = 2;

/** enum nft_verdict_attributes (nf_tables.h); NFTA_VERDICT_CODE is a __be32. */
export const NFTA_VERDICT_CODE = 1;
export const NFTA_VERDICT_CHAIN = 2;

/** Verdict codes: netfilter's NF_DROP/NF_ACCEPT (linux/netfilter.h) and enum nft_verdicts (nf_tables.h). */
export const VERDICT_CODES = { drop: 0, accept: 1, continue: -1, jump: -3, goto: -4, return: -5 } as const;

/** enum nfproto (linux/netfilter.h): nfgen_family of a table. */
export const NFPROTO_INET = 1;
export const NFPROTO_IPV4 = 2;
export const NFPROTO_BRIDGE = 7;
export const NFPROTO_IPV6 = 10;

/** NFT_REG32_SIZE (nf_tables.h): each part of a concatenated key is padded to 4 bytes. */
export const NFT_REG32_SIZE = 4;

/** IFNAMSIZ (linux/if.h): an `ifname` key is the name NUL-padded to this many bytes (nft's ifname type). */
export const IFNAMSIZ = 16;

/** NFT_USERDATA_MAXLEN (nf_tables.h): the kernel refuses longer NFTA_SET_ELEM_USERDATA. */
export const NFT_USERDATA_MAXLEN = 256;

/** enum nftnl_udata_set_elem_types (libnftnl udata.h): TLV types inside an element's user data. */
export const NFTNL_UDATA_SET_ELEM_COMMENT = 0;
export const NFTNL_UDATA_SET_ELEM_FLAGS = 1;

/** nlmsg_type of an nf_tables message: subsystem in the high byte, message in the low byte. */
export function nftMsgType(msg: number): number {
  return (NFNL_SUBSYS_NFTABLES << 8) | msg;
}
