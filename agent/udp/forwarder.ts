// The udp backend's data plane (node netns): flannel0 <-> UDP port, driven by libuv readiness
// (lib/sys pollStart) with batched reads and writes in the addon, decisions in forward.ts.
// One wake-up moves up to BATCH packets per side without allocating; the fds are level-triggered,
// so a side that still has packets after MAX_ROUNDS batches is simply called again by the loop.
import { sys } from '../../lib/sys/index.ts';
import { DROP_SEND_FULL, DROP_TRUNCATED, DROP_TUN_WRITE, DROP_NO_ROUTE, UdpCounters } from './counters.ts';
import { SEND, checkInbound, routeOutbound } from './forward.ts';
import { ICMP_ERROR_MAX } from './ipv4.ts';
import type { PeerTable } from './peer-table.ts';

/** Packets per batched call (a vnet read keeps 64 slots free for one segmented superpacket). */
const BATCH = 256;
/** Batches per wake-up before yielding to the other side and to timers. */
const MAX_ROUNDS = 4;
const ICMP_SLOT = 128;

/** What the forwarder runs on. */
export interface ForwarderOptions {
  /** Non-blocking TUN fd (IFF_TUN | IFF_NO_PI). */
  tunFd: number;
  /** Non-blocking UDP socket bound to the node address and port. */
  udpFd: number;
  /** Peers' port (flannel: every node uses the same, 8285 by default). */
  port: number;
  /** Source address of ICMP errors we generate (flannel0's <subnet>.0), host order. */
  localAddr: number;
  /** flannel0's MTU: slots are sized so that no packet or datagram is ever truncated. */
  mtu: number;
  /** Send runs of equal-size packets to one peer as a UDP GSO message (see lib/sys udpSendBatch). */
  gso: boolean;
  /** The TUN was opened with a virtio_net_hdr: reads strip it, writes coalesce TCP runs (see lib/sys tunWriteBatch). */
  vnet: boolean;
  /** With vnet: write received packets one by one instead of coalescing TCP runs. */
  noCoalesce: boolean;
}

/** Slot size for an MTU: room for the largest packet, a multiple of 64 bytes. */
export function slotSize(mtu: number): number {
  return Math.max(2048, Math.ceil((mtu + 64) / 64) * 64);
}

/** A running forwarder; setTable swaps the lease view atomically between batches. */
export class UdpForwarder {
  readonly counters = new UdpCounters();
  private table: PeerTable;
  private readonly slot: number;
  // TUN -> UDP
  private readonly outBuf: Buffer;
  private readonly outLens = new Uint32Array(BATCH);
  private readonly outDsts = new Uint32Array(BATCH);
  // UDP -> TUN
  private readonly inBuf: Buffer;
  private readonly inLens = new Uint32Array(BATCH);
  private readonly inSrcs = new Uint32Array(BATCH);
  // ICMP errors back into the TUN
  private readonly icmpBuf = Buffer.alloc(BATCH * ICMP_SLOT);
  private readonly icmpLens = new Uint32Array(BATCH);
  private readonly verdict = { node: 0, icmpLen: 0 };
  private localAddr: number;
  private tunWatch = 0;
  private udpWatch = 0;

  constructor(private readonly o: ForwarderOptions, table: PeerTable) {
    this.table = table;
    this.localAddr = o.localAddr;
    this.slot = slotSize(o.mtu);
    this.outBuf = Buffer.alloc(BATCH * this.slot);
    this.inBuf = Buffer.alloc(BATCH * this.slot);
    if (ICMP_ERROR_MAX > ICMP_SLOT) throw new Error('ICMP slot too small');
  }

  /** Changes the ICMP source (flannel0's address follows the own lease). */
  setLocalAddr(addr: number): void {
    this.localAddr = addr >>> 0;
  }

  /** Replaces the lease view (on every lease change). */
  setTable(table: PeerTable): void {
    this.table = table;
  }

  /** Current lease view. */
  get peers(): PeerTable {
    return this.table;
  }

  /** Starts both readiness watches (they do not keep the process alive). Idempotent. */
  start(): void {
    if (this.tunWatch !== 0) return;
    this.tunWatch = sys().pollStart(this.o.tunFd, () => this.onTun());
    this.udpWatch = sys().pollStart(this.o.udpFd, () => this.onUdp());
  }

  /** Stops the watches; the fds stay open (the owner closes them). Idempotent. */
  stop(): void {
    if (this.tunWatch !== 0) sys().pollStop(this.tunWatch);
    if (this.udpWatch !== 0) sys().pollStop(this.udpWatch);
    this.tunWatch = 0;
    this.udpWatch = 0;
  }

  /** TUN readable: read batches, route each packet, send the batch; ICMP errors go back to the TUN. */
  onTun(): void {
    const s = sys();
    const c = this.counters;
    const { slot, outBuf, outLens, outDsts, verdict } = this;
    c.tunWakeups++;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const n = s.tunReadBatch(this.o.tunFd, outBuf, slot, outLens, BATCH, this.o.vnet);
      if (n === 0) return;
      let icmps = 0;
      let queued = 0;
      for (let i = 0; i < n; i++) {
        const len = outLens[i] as number;
        const v = routeOutbound(outBuf, i * slot, len, this.table, this.localAddr, this.icmpBuf, icmps * ICMP_SLOT, verdict);
        if (v === SEND) {
          outDsts[i] = verdict.node;
          queued++;
          continue;
        }
        outLens[i] = 0;
        c.drop(v);
        if (verdict.icmpLen > 0) {
          this.icmpLens[icmps++] = verdict.icmpLen;
          if (v === DROP_NO_ROUTE) c.icmpUnreachable++;
          else c.icmpTimeExceeded++;
        }
      }
      if (queued > 0) this.sendOut(n, queued);
      if (icmps > 0) s.tunWriteBatch(this.o.tunFd, this.icmpBuf, ICMP_SLOT, this.icmpLens, icmps, this.o.vnet);
      // A vnet read stops early to keep room for a superpacket: only "nothing read" means drained.
      if (n < (this.o.vnet ? BATCH - 64 : BATCH)) return;
    }
  }

  private sendOut(n: number, queued: number): void {
    const c = this.counters;
    const sent = sys().udpSendBatch(this.o.udpFd, this.outBuf, this.slot, this.outLens, n, this.outDsts, this.o.port, this.o.gso);
    // sendmmsg sends in order: the first `sent` non-empty slots went out.
    let seen = 0;
    for (let i = 0; i < n && seen < sent; i++) {
      const len = this.outLens[i] as number;
      if (len === 0) continue;
      seen++;
      c.txBytes += len;
    }
    c.txPackets += sent;
    if (sent < queued) c.drop(DROP_SEND_FULL, queued - sent);
  }

  /** UDP readable: receive batches, admit only lease holders' own traffic, write the batch to the TUN. */
  onUdp(): void {
    const s = sys();
    const c = this.counters;
    const { slot, inBuf, inLens, inSrcs } = this;
    c.udpWakeups++;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const n = s.udpRecvBatch(this.o.udpFd, inBuf, slot, inLens, BATCH, inSrcs);
      if (n === 0) return;
      let admitted = 0;
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        const len = inLens[i] as number;
        if (len === 0) { c.drop(DROP_TRUNCATED); continue; }
        const v = checkInbound(inBuf, i * slot, len, inSrcs[i] as number, this.table);
        if (v !== SEND) { inLens[i] = 0; c.drop(v); continue; }
        admitted++;
        bytes += len;
      }
      if (admitted > 0) {
        const written = s.tunWriteBatch(this.o.tunFd, inBuf, slot, inLens, n, this.o.vnet, this.o.noCoalesce);
        c.rxPackets += written;
        c.rxBytes += bytes;
        if (written < admitted) c.drop(DROP_TUN_WRITE, admitted - written);
      }
      if (n < BATCH) return;
    }
  }
}
