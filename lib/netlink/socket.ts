// Synchronous request/ACK and dump exchanges over one netlink socket. Synchronous on purpose: plugins
// run these inside withNetns, where no await may happen, and the kernel answers in microseconds.
import { closeSync } from 'node:fs';
import { traceStep } from '../trace/steps.ts';
import { sys } from '../sys/index.ts';
import { NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLMSG_OVERRUN, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST } from './constants.ts';
import { NetlinkError } from './errors.ts';
import { formatNlMsg, parseNlDone, parseNlError, parseNlMsgs, type NlMsg } from './framing.ts';

/** The raw datagram operations NlSocket needs; the default uses lib/sys, unit tests inject a fake kernel. */
export interface NlTransport {
  send(msg: Uint8Array): void;
  /** One datagram, or null after timeoutMs (-1 blocks). */
  recv(timeoutMs: number): Uint8Array | null;
  close(): void;
}

/** Opens a raw netlink socket of `protocol` in the calling thread's current netns (it stays bound there). */
export function openSysTransport(protocol: number, groups = 0): NlTransport & { fd: number } {
  const s = sys();
  const fd = s.nlOpen(protocol, groups);
  return {
    fd,
    send: (msg) => s.nlSend(fd, msg),
    recv: (timeoutMs) => s.nlRecv(fd, timeoutMs),
    close: () => closeSync(fd),
  };
}

/**
 * How long a request waits for the kernel's next datagram before failing with ETIMEDOUT; the kernel
 * answers in microseconds. It runs from the last datagram, not from the send: a dump of 100,000 set
 * elements, each handed to a caller that may pause for garbage collection, lasts longer than this on
 * a loaded node while the kernel is never the one keeping it waiting.
 */
const REPLY_TIMEOUT_MS = 5000;
const ETIMEDOUT = 110;
const EINTR = 4;
/** NLM_F_DUMP_INTR means the table changed during the dump (linux/netlink.h); retry this many times. */
const DUMP_RETRIES = 3;

/** A netlink socket with sequence numbers; messages whose seq or port id are not ours are skipped. */
export class NlSocket {
  private seq: number;
  /** Our port id, learned from the first reply (the kernel assigns it at bind with nl_pid 0). */
  private portId: number | undefined;

  constructor(private readonly transport: NlTransport) {
    // A per-socket random start keeps replies to another socket's (or a timed-out) request from matching.
    this.seq = (Math.random() * 0x3fffffff) >>> 0;
  }

  /** Closes the underlying socket. */
  close(): void {
    this.transport.close();
  }

  /** Sends a request with NLM_F_ACK, returns the data messages that preceded the ACK; throws NetlinkError on a negative ACK. */
  request(op: string, type: number, flags: number, payload: Uint8Array): NlMsg[] {
    const seq = this.send(type, flags | NLM_F_REQUEST | NLM_F_ACK, payload);
    const out: NlMsg[] = [];
    this.receive(op, seq, (m) => {
      if (m.type === NLMSG_ERROR) {
        const st = parseNlError(m);
        if (st.errno !== 0) throw new NetlinkError(op, st.errno, st.extAck);
        return true;
      }
      if (m.type === NLMSG_DONE) return false; // a multipart reply ends, its ACK follows
      out.push(m);
      return false;
    });
    traceStep(op);
    return out;
  }

  /** Sends a dump request (NLM_F_DUMP) and returns every message up to NLMSG_DONE, retrying interrupted dumps. */
  dump(op: string, type: number, payload: Uint8Array): NlMsg[] {
    let out: NlMsg[] = [];
    this.dumpEach(op, type, payload, (m) => { out.push(m); }, () => { out = []; });
    return out;
  }

  /**
   * A dump whose messages go to `each` as they arrive, so that a large one (a map of 100,000
   * elements) is never held whole. When the kernel flags the dump interrupted (NLM_F_DUMP_INTR:
   * the object changed meanwhile, what was read may be inconsistent) `restart` is called, and the
   * dump is sent again.
   */
  dumpEach(op: string, type: number, payload: Uint8Array, each: (m: NlMsg) => void, restart: () => void): void {
    for (let attempt = 0; ; attempt++) {
      const seq = this.send(type, NLM_F_REQUEST | NLM_F_DUMP, payload);
      let interrupted = false;
      this.receive(op, seq, (m) => {
        if (m.flags & NLM_F_DUMP_INTR) interrupted = true;
        if (m.type === NLMSG_ERROR) {
          const st = parseNlError(m);
          if (st.errno !== 0) throw new NetlinkError(op, st.errno, st.extAck);
          return true;
        }
        if (m.type === NLMSG_DONE) {
          const st = parseNlDone(m);
          if (st.errno !== 0) throw new NetlinkError(op, st.errno, st.extAck);
          return true;
        }
        each(m);
        return false;
      });
      traceStep(op);
      if (!interrupted) return;
      if (attempt >= DUMP_RETRIES) throw new NetlinkError(`${op} (dump kept being interrupted)`, EINTR);
      restart();
    }
  }

  private send(type: number, flags: number, payload: Uint8Array): number {
    this.seq = (this.seq + 1) >>> 0 || 1;
    this.transport.send(formatNlMsg({ type, flags, seq: this.seq, payload }));
    return this.seq;
  }

  /** Feeds our messages to `handle` until it returns true. */
  private receive(op: string, seq: number, handle: (m: NlMsg) => boolean): void {
    for (;;) {
      const buf = this.transport.recv(REPLY_TIMEOUT_MS);
      if (!buf) throw new NetlinkError(op, ETIMEDOUT);
      for (const m of parseNlMsgs(buf)) {
        if (m.seq !== seq || m.type === NLMSG_NOOP || m.type === NLMSG_OVERRUN) continue;
        if (this.portId === undefined) this.portId = m.pid;
        else if (m.pid !== this.portId) continue;
        if (handle(m)) return;
      }
    }
  }
}
