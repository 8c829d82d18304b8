// Netlink and rtnetlink numbers shared by several message codecs. Values and names come from the
// kernel UAPI headers linux/netlink.h, linux/rtnetlink.h and linux/socket.h; attribute numbers
// that belong to one message type live next to its codec (link.ts, ifaddr.ts, route.ts, neigh.ts).

/** Protocol number of the routing netlink family (linux/netlink.h NETLINK_ROUTE). */
export const NETLINK_ROUTE = 0;

/** Control message types (linux/netlink.h). */
export const NLMSG_NOOP = 1;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
export const NLMSG_OVERRUN = 4;

/** nlmsg_flags (linux/netlink.h). */
export const NLM_F_REQUEST = 0x01;
export const NLM_F_MULTI = 0x02;
export const NLM_F_ACK = 0x04;
export const NLM_F_ECHO = 0x08;
export const NLM_F_DUMP_INTR = 0x10;
export const NLM_F_DUMP_FILTERED = 0x20;
// Modifiers to GET requests.
export const NLM_F_ROOT = 0x100;
export const NLM_F_MATCH = 0x200;
export const NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH;
// Modifiers to NEW requests.
export const NLM_F_REPLACE = 0x100;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const NLM_F_APPEND = 0x800;
// Flags on NLMSG_ERROR acknowledgements.
export const NLM_F_CAPPED = 0x100;
export const NLM_F_ACK_TLVS = 0x200;

/** struct nlmsgerr TLVs after the echoed request (linux/netlink.h enum nlmsgerr_attrs). */
export const NLMSGERR_ATTR_MSG = 1;
export const NLMSGERR_ATTR_OFFS = 2;

/** rtnetlink message types (linux/rtnetlink.h). */
export const RTM_NEWLINK = 16;
export const RTM_DELLINK = 17;
export const RTM_GETLINK = 18;
export const RTM_SETLINK = 19;
export const RTM_NEWADDR = 20;
export const RTM_DELADDR = 21;
export const RTM_GETADDR = 22;
export const RTM_NEWROUTE = 24;
export const RTM_DELROUTE = 25;
export const RTM_GETROUTE = 26;
export const RTM_NEWNEIGH = 28;
export const RTM_DELNEIGH = 29;
export const RTM_GETNEIGH = 30;

/** Kernel names of the message types above, for error messages and debugging. */
export const RTM_NAMES: Readonly<Record<number, string>> = {
  16: 'RTM_NEWLINK', 17: 'RTM_DELLINK', 18: 'RTM_GETLINK', 19: 'RTM_SETLINK',
  20: 'RTM_NEWADDR', 21: 'RTM_DELADDR', 22: 'RTM_GETADDR',
  24: 'RTM_NEWROUTE', 25: 'RTM_DELROUTE', 26: 'RTM_GETROUTE',
  28: 'RTM_NEWNEIGH', 29: 'RTM_DELNEIGH', 30: 'RTM_GETNEIGH',
};

/** Address families (linux/socket.h). */
export const AF_UNSPEC = 0;
export const AF_INET = 2;
export const AF_BRIDGE = 7;
export const AF_INET6 = 10;

/** Maps our 4 | 6 family notation to AF_INET / AF_INET6. */
export function afOf(family: 4 | 6): number {
  return family === 4 ? AF_INET : AF_INET6;
}

/** rtnetlink multicast groups (linux/rtnetlink.h enum rtnetlink_groups). */
export const RTNLGRP_LINK = 1;
export const RTNLGRP_NEIGH = 3;
export const RTNLGRP_IPV4_IFADDR = 5;
export const RTNLGRP_IPV4_ROUTE = 7;
export const RTNLGRP_IPV6_IFADDR = 9;
export const RTNLGRP_IPV6_ROUTE = 11;

/** Link attributes (linux/if_link.h enum IFLA_*), the ones we send or decode. */
export const IFLA_ADDRESS = 1;
export const IFLA_BROADCAST = 2;
export const IFLA_IFNAME = 3;
export const IFLA_MTU = 4;
export const IFLA_LINK = 5;
export const IFLA_MASTER = 10;
export const IFLA_PROTINFO = 12;
export const IFLA_TXQLEN = 13;
export const IFLA_OPERSTATE = 16;
export const IFLA_LINKINFO = 18;
/** Free-text alias of a link (`ip link set x alias y`), at most IFALIASZ-1 = 255 bytes. */
export const IFLA_IFALIAS = 20;
export const IFLA_NET_NS_FD = 28;
/** u32 RTEXT_FILTER_* bits in an RTM_GETLINK request: what the kernel may leave out of the reply. */
export const IFLA_EXT_MASK = 29;
/** RTEXT_FILTER_SKIP_STATS (linux/rtnetlink.h): no IFLA_STATS/IFLA_STATS64 in link replies; older kernels ignore the bit. */
export const RTEXT_FILTER_SKIP_STATS = 1 << 3;
export const IFLA_LINK_NETNSID = 37;
