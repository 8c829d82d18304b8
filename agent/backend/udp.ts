// udp: flannel's userspace backend. A TUN device flannel0 (MTU = uplink - 28, address <subnet>.0/32,
// a route for the whole Network through it) and a UDP socket on <node address>:<port> (8285),
// joined by the forwarder in agent/udp/. No per-lease kernel state: the lease table lives in the
// forwarder. The TUN is not persistent, so it disappears with weftd (and is re-created on start).
import { closeSync, writeFileSync } from 'node:fs';
import type { Link, Rtnl } from '../../lib/netlink/index.ts';
import { UDP_TUN_NAME } from '../../lib/flannel/devices.ts';
import { sys } from '../../lib/sys/index.ts';
import type { BackendConf } from '../config/backend-conf.ts';
import { formatIPv4, parseCidr4 } from '../../lib/ip/ipv4.ts';
import type { BackendData, Lease } from '../lease/store.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { DevIndexes } from '../reconcile/diff.ts';
import type { Uplink } from '../uplink.ts';
import { defineUdpMetrics, exportUdpMetrics, exportUdpPeers } from '../udp/counters.ts';
import { UdpForwarder } from '../udp/forwarder.ts';
import { PeerTable, udpPeerLeases } from '../udp/peer-table.ts';
import type { Backend } from './backend.ts';

/** Outer IPv4 header 20 + UDP header 8 (the payload is the bare inner packet). */
export const UDP_OVERHEAD = 28;
/** rtm_protocol of the Network route: RTPROT_STATIC (linux/rtnetlink.h), not weftd's per-lease 87, which reconcile prunes. */
const RTPROT_STATIC = 4;
/**
 * flannel0's transmit queue (packets the stack hands us before the forwarder reads them). The TUN
 * default of 500 overflowed under load in the benchmark (every drop a TCP retransmit); measured:
 * 3,008 drops and 2,846 retransmits in 5 s at 500, none at 5,000, same throughput.
 */
const TUN_TX_QUEUE = 5000;
/** Socket buffers for the forwarder's UDP socket: bursts queue here between batches. */
const UDP_SOCKET_BUFFER = 4 << 20;

/** The udp backend (node netns). */
export class UdpBackend implements Backend {
  readonly type = 'udp' as const;
  private readonly mtu: number;
  private tun: { fd: number; index: number } | undefined;
  private udpFd = -1;
  private forwarder: UdpForwarder | undefined;
  private tableKey = '';
  /** Coalesce received TCP segments into superpackets on flannel0; WEFT_UDP_GRO=0 turns it off. */
  private readonly gro = process.env['WEFT_UDP_GRO'] !== '0';
  /** Let the stack hand flannel0 TCP superpackets, segmented in the addon; WEFT_UDP_TSO=0 turns it off. */
  private readonly tso = process.env['WEFT_UDP_TSO'] !== '0';
  /**
   * Test-only (WEFT_UDP_TEST_FREEZE_TABLE=1, off by default): the forwarder keeps the first lease
   * table it was given, so that a test can make it differ from the lease table (doctor's peers check).
   */
  private readonly freezeTable = process.env['WEFT_UDP_TEST_FREEZE_TABLE'] === '1';
  /** Both need the virtio_net_hdr on flannel0 (IFF_VNET_HDR). */
  private readonly vnet = this.gro || this.tso;

  constructor(private readonly conf: BackendConf, private readonly uplink: Uplink, private readonly opts: { network: string; log: AgentLog }) {
    this.mtu = conf.mtu ?? uplink.mtu - UDP_OVERHEAD;
    if (parseCidr4(opts.network) === null) throw new Error(`udp: the Network ${JSON.stringify(opts.network)} is not an IPv4 prefix`);
  }

  /** flannel's udp leases carry no BackendData. */
  backendData(): BackendData {
    return {};
  }

  /** Pods use flannel0's MTU so that the datagram fits the uplink. */
  podMtu(): number {
    return this.mtu;
  }

  /** Idempotent: flannel0 open, configured and routed; the UDP socket bound; the forwarder running. */
  ensureLocal(rtnl: Rtnl, own: Lease): DevIndexes {
    const sn = parseCidr4(own.subnet);
    if (sn === null) throw new Error(`own lease subnet ${own.subnet} is not an IPv4 network`);
    const link = this.ensureTun(rtnl);
    this.ensureTunConfig(rtnl, link, `${formatIPv4(sn.ip)}/32`);
    if (this.udpFd < 0) {
      this.udpFd = sys().udpOpen(this.uplink.publicIp, this.conf.port, UDP_SOCKET_BUFFER);
      this.opts.log.info('udp socket bound', { addr: this.uplink.publicIp, port: this.conf.port });
    }
    const tun = this.tun as { fd: number; index: number };
    if (!this.forwarder) {
      this.forwarder = new UdpForwarder({ tunFd: tun.fd, udpFd: this.udpFd, port: this.conf.port, localAddr: sn.ip >>> 0, mtu: this.mtu, gso: process.env['WEFT_UDP_GSO'] !== '0', vnet: this.vnet, noCoalesce: !this.gro }, new PeerTable([own], own.subnet));
      this.forwarder.start();
    }
    this.forwarder.setLocalAddr(sn.ip);
    const up = rtnl.getLink(this.uplink.name);
    if (!up) throw new Error(`uplink ${this.uplink.name} is gone`);
    return { uplink: up.index };
  }

  /** Gives the forwarder the current udp leases (rebuilt only when they changed). */
  syncLeases(leases: readonly Lease[], own: Lease): void {
    const udp = udpPeerLeases(leases, own.subnet);
    const key = `${own.subnet} ${udp.map((l) => `${l.subnet}@${l.publicIp}`).sort().join(',')}`;
    if (key === this.tableKey || !this.forwarder) return;
    if (this.freezeTable && this.tableKey !== '') return;
    this.tableKey = key;
    this.forwarder.setTable(new PeerTable(udp, own.subnet));
    this.opts.log.debug('udp peers', { peers: udp.length });
  }

  /** Declares weftd_udp_* and refreshes them before each scrape. */
  attachMetrics(m: Metrics): void {
    defineUdpMetrics(m);
    m.addCollector(() => {
      if (!this.forwarder) return;
      exportUdpMetrics(m, this.forwarder.counters);
      exportUdpPeers(m, this.forwarder.peers.rows());
    });
  }

  /** flannel0 and the uplink. */
  watchesLink(link: Link): boolean {
    return link.name === UDP_TUN_NAME || link.name === this.uplink.name;
  }

  /** Stops forwarding and closes the fds (flannel0 vanishes with its last fd). Idempotent. */
  stop(): void {
    this.forwarder?.stop();
    this.forwarder = undefined;
    if (this.udpFd >= 0) closeSync(this.udpFd);
    this.udpFd = -1;
    if (this.tun) closeSync(this.tun.fd);
    this.tun = undefined;
  }

  /** The forwarder (tests, benchmarks). */
  get dataPlane(): UdpForwarder | undefined {
    return this.forwarder;
  }

  // Opens flannel0 unless our fd still backs the device of that name; a device deleted under us
  // (ip link del) is replaced and the forwarder restarted on the new fd.
  private ensureTun(rtnl: Rtnl): Link {
    const existing = rtnl.getLink(UDP_TUN_NAME);
    if (this.tun && existing && existing.index === this.tun.index) return existing;
    if (this.tun) {
      this.opts.log.warn('flannel0 changed under us: re-opening', { was: this.tun.index, now: existing?.index });
      this.forwarder?.stop();
      this.forwarder = undefined;
      this.tableKey = '';
      closeSync(this.tun.fd);
      this.tun = undefined;
    }
    const { fd } = sys().tunOpen(UDP_TUN_NAME, this.vnet);
    try {
      sys().setNonBlocking(fd);
      if (this.tso) sys().tunSetOffload(fd, true);
      sys().setTxQueueLen(UDP_TUN_NAME, TUN_TX_QUEUE);
      disableIpv6(UDP_TUN_NAME);
      acceptLocal(UDP_TUN_NAME);
      const link = rtnl.getLink(UDP_TUN_NAME);
      if (!link) throw new Error(`${UDP_TUN_NAME} did not appear after TUNSETIFF`);
      this.tun = { fd, index: link.index };
      this.opts.log.info('opened TUN', { dev: UDP_TUN_NAME, index: link.index, mtu: this.mtu });
      return link;
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  private ensureTunConfig(rtnl: Rtnl, link: Link, cidr: string): void {
    if (link.mtu !== this.mtu) rtnl.setMtu(link.index, this.mtu);
    const addrs = rtnl.listAddrs({ family: 4, index: link.index });
    // The device is ours: an address left from a previous lease goes.
    for (const a of addrs) if (a.cidr !== cidr) rtnl.delAddr({ index: link.index, cidr: a.cidr });
    if (!addrs.some((a) => a.cidr === cidr)) rtnl.addAddr({ index: link.index, cidr });
    if (!link.up) rtnl.setLinkUp(link.index);
    const net = this.opts.network;
    const have = rtnl.listRoutes({ family: 4, table: 254 }).some((r) => r.dst === net && r.oif === link.index);
    if (!have) rtnl.addRoute({ dst: net, oif: link.index, protocol: RTPROT_STATIC, scope: 253, replace: true });
  }
}


// The forwarder carries IPv4 only: no link-local address, router solicitations or MLD on flannel0
// (they would only be counted as malformed). Best effort: IPv6 may be off in the netns already.
function disableIpv6(dev: string): void {
  try {
    writeFileSync(`/proc/sys/net/ipv6/conf/${dev}/disable_ipv6`, '1');
  } catch {
    // no IPv6 in this kernel or netns: nothing to turn off
  }
}

// The forwarder's ICMP errors come from flannel0's own address (as a router's would); without
// accept_local the stack drops a packet arriving with a local source as a martian
// (fib_validate_source in net/ipv4/fib_frontend.c), so pods would never see them.
function acceptLocal(dev: string): void {
  writeFileSync(`/proc/sys/net/ipv4/conf/${dev}/accept_local`, '1');
}
