// The forwarder's view of the lease table: longest-prefix lookup of a destination to the node
// that holds it, and the stranger checks for received datagrams (is the sender a lease holder,
// does the inner source lie in one of its subnets). Built once per lease change, read per packet.
import { formatIPv4, parseCidr4, parseIPv4 } from '../../lib/ip/ipv4.ts';
import type { Lease } from '../lease/store.ts';

/** Results of checkSender: accepted, sender holds no lease, inner source outside the sender's subnets. */
export const SENDER_OK = 0;
export const SENDER_UNKNOWN_NODE = 1;
export const SENDER_FOREIGN_SOURCE = 2;

/** One forwarder entry: the lease subnet (network form) and the node address its packets go to. */
export interface PeerRow {
  subnet: string;
  publicIp: string;
}

/**
 * The leases the udp forwarder takes (pure; weftd and `weft doctor` agree through it): flanneld's udp
 * backend writes its lease with no BackendType at all ("" once decoded), and its own udp network
 * takes every lease, so a typeless lease is a udp peer too; the node's own lease always.
 */
export function udpPeerLeases<L extends Pick<Lease, 'subnet' | 'backendType'>>(leases: readonly L[], ownSubnet: string): L[] {
  return leases.filter((l) => l.backendType === 'udp' || l.backendType === '' || l.subnet === ownSubnet);
}

/** An immutable table of leases (IPv4 only; other leases are ignored). */
export class PeerTable {
  /** Network addresses, masks and node addresses, longest prefix first (host-order integers). */
  private readonly nets: Uint32Array;
  private readonly masks: Uint32Array;
  private readonly nodes: Uint32Array;
  private readonly prefixes: Uint8Array;
  /** Node address -> indexes of its subnets (a node normally holds one lease). */
  private readonly byNode = new Map<number, number[]>();
  private readonly ownNet: number;
  private readonly ownMask: number;

  /** `ownSubnet` is this node's lease; it is kept so lookups can tell "local" from "unknown". */
  constructor(leases: readonly Lease[], readonly ownSubnet: string) {
    const rows: Array<{ net: number; prefix: number; node: number }> = [];
    for (const l of leases) {
      const sn = parseCidr4(l.subnet);
      const node = parseIPv4(l.publicIp);
      if (sn === null || node === null) continue;
      rows.push({ net: sn.ip >>> 0, prefix: sn.prefix, node: node >>> 0 });
    }
    rows.sort((a, b) => b.prefix - a.prefix);
    this.nets = new Uint32Array(rows.length);
    this.masks = new Uint32Array(rows.length);
    this.nodes = new Uint32Array(rows.length);
    this.prefixes = new Uint8Array(rows.length);
    rows.forEach((r, i) => {
      this.nets[i] = r.net;
      this.masks[i] = r.prefix === 0 ? 0 : (0xffffffff << (32 - r.prefix)) >>> 0;
      this.nodes[i] = r.node;
      this.prefixes[i] = r.prefix;
      const list = this.byNode.get(r.node);
      if (list) list.push(i);
      else this.byNode.set(r.node, [i]);
    });
    const own = parseCidr4(ownSubnet);
    this.ownNet = own === null ? 0 : own.ip >>> 0;
    this.ownMask = own === null || own.prefix === 0 ? 0 : (0xffffffff << (32 - own.prefix)) >>> 0;
  }

  /** The entries, longest prefix first (for /metrics; not on the packet path). */
  rows(): PeerRow[] {
    const out: PeerRow[] = [];
    for (let i = 0; i < this.nets.length; i++) {
      out.push({ subnet: `${formatIPv4(this.nets[i] as number)}/${this.prefixes[i] as number}`, publicIp: formatIPv4(this.nodes[i] as number) });
    }
    return out;
  }

  /** Number of leases in the table. */
  get size(): number {
    return this.nets.length;
  }

  /** Node address (host order) owning `dst` by longest prefix, or -1 when no lease covers it. */
  lookup(dst: number): number {
    const n = this.nets.length;
    for (let i = 0; i < n; i++) {
      if (((dst & (this.masks[i] as number)) >>> 0) === this.nets[i]) return this.nodes[i] as number;
    }
    return -1;
  }

  /** True when `ip` lies in this node's own lease subnet. */
  isLocal(ip: number): boolean {
    return ((ip & this.ownMask) >>> 0) === this.ownNet;
  }

  /** Whether a datagram from node address `node` may carry an inner packet from `src`. */
  checkSender(node: number, src: number): number {
    const idx = this.byNode.get(node);
    if (idx === undefined) return SENDER_UNKNOWN_NODE;
    for (const i of idx) {
      if (((src & (this.masks[i] as number)) >>> 0) === this.nets[i]) return SENDER_OK;
    }
    return SENDER_FOREIGN_SOURCE;
  }
}
