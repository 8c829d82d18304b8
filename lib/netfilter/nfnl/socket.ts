// NfnlSocket: one NETLINK_NETFILTER socket speaking nf_tables batches and dumps, in-process, so the
// plugins' steady-state ADD/DEL never spawn `nft`. Framing comes from lib/netlink (nlmsghdr, nlattr,
// NLMSG_ERROR); only the batch exchange (nfnetlink.h NFNL_MSG_BATCH_BEGIN ... END) is specific here.
import { statSync } from 'node:fs';
import { concat } from '../../netlink/attrs.ts';
import { NLMSG_ERROR, NLM_F_ACK, NLM_F_REQUEST } from '../../netlink/constants.ts';
import { NetlinkError, errnoInfo } from '../../netlink/errors.ts';
import { formatNlMsg, parseNlError, parseNlMsgs, type NlMsg } from '../../netlink/framing.ts';
import { NlSocket, openSysTransport, type NlTransport } from '../../netlink/socket.ts';
import { NETLINK_NETFILTER, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES, nftMsgType } from './constants.ts';
import { formatNfgenmsg } from './elem.ts';

/** One command of a batch: an nf_tables message type (NFT_MSG_*), extra NLM_F_* flags and its payload. */
export interface NfnlCommand {
  readonly msg: number;
  readonly flags?: number;
  readonly payload: Uint8Array;
}

/** One refused command of a failed batch: its index in the batch and the kernel's errno. */
export interface NfnlFailure {
  readonly index: number;
  readonly errno: number;
  readonly code: string;
  readonly extAck?: string;
}

/**
 * A batch the kernel refused as a whole (nf_tables applies all commands or none). `failures` lists
 * every command the kernel reported (it may stop reporting after the first); errno/code are the first's.
 */
export class NfnlBatchError extends NetlinkError {
  readonly failures: readonly NfnlFailure[];
  constructor(op: string, failures: readonly NfnlFailure[]) {
    const first = failures[0];
    super(`${op}${first === undefined ? '' : ` (command ${first.index})`}`, first?.errno ?? 5, first?.extAck);
    this.name = 'NfnlBatchError';
    this.failures = failures;
  }
}

/** How long a batch waits for the kernel; it answers during our send() (nfnetlink runs in the sender's context). */
const REPLY_TIMEOUT_MS = 5000;
const ETIMEDOUT = 110;

/** A NETLINK_NETFILTER socket; bound for ever to the netns it was opened in. */
export class NfnlSocket {
  private seq = (Math.random() * 0x3fffffff) >>> 0;
  private readonly dumper: NlSocket;

  private constructor(private readonly transport: NlTransport) {
    this.dumper = new NlSocket(transport);
  }

  /** Opens a socket in the calling thread's current network namespace (usually the node's). */
  static open(): NfnlSocket {
    return new NfnlSocket(openSysTransport(NETLINK_NETFILTER, 0));
  }

  /** Wraps an injected transport (unit tests with a fake kernel). */
  static fromTransport(t: NlTransport): NfnlSocket {
    return new NfnlSocket(t);
  }

  /** Closes the socket. */
  close(): void {
    this.transport.close();
  }

  private nextSeq(): number {
    this.seq = (this.seq + 1) >>> 0 || 1;
    return this.seq;
  }

  /**
   * Sends BATCH_BEGIN, the commands (each with NLM_F_ACK) and BATCH_END in one datagram: one nf_tables
   * transaction. Returns when every command is acknowledged; throws NfnlBatchError when any was refused
   * (then nothing was applied). An empty command list sends nothing.
   */
  commit(op: string, commands: readonly NfnlCommand[]): void {
    if (commands.length === 0) return;
    const batchHdr = formatNfgenmsg(0, NFNL_SUBSYS_NFTABLES); // AF_UNSPEC, res_id = subsystem
    const begin = this.nextSeq();
    const seqs = commands.map(() => this.nextSeq());
    const end = this.nextSeq();
    const msgs = [formatNlMsg({ type: NFNL_MSG_BATCH_BEGIN, flags: NLM_F_REQUEST, seq: begin, payload: batchHdr })];
    commands.forEach((c, i) => {
      msgs.push(formatNlMsg({ type: nftMsgType(c.msg), flags: NLM_F_REQUEST | NLM_F_ACK | (c.flags ?? 0), seq: seqs[i] ?? 0, payload: c.payload }));
    });
    msgs.push(formatNlMsg({ type: NFNL_MSG_BATCH_END, flags: NLM_F_REQUEST, seq: end, payload: batchHdr }));
    this.transport.send(concat(msgs));
    this.collectAcks(op, begin, seqs, end);
  }

  private collectAcks(op: string, begin: number, seqs: readonly number[], end: number): void {
    const index = new Map(seqs.map((s, i) => [s, i]));
    const pending = new Set(seqs);
    const failures: NfnlFailure[] = [];
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    while (pending.size > 0) {
      // Once something failed the kernel may not acknowledge the rest: take only what is queued.
      const wait = failures.length > 0 ? 0 : Math.max(0, deadline - Date.now());
      const buf = this.transport.recv(wait);
      if (buf === null) {
        if (failures.length > 0) break;
        throw new NetlinkError(op, ETIMEDOUT);
      }
      for (const m of parseNlMsgs(buf)) this.noteReply(m, { index, pending, failures, begin, end });
    }
    if (failures.length > 0) throw new NfnlBatchError(op, failures.sort((a, b) => a.index - b.index));
  }

  private noteReply(
    m: NlMsg,
    st: { index: Map<number, number>; pending: Set<number>; failures: NfnlFailure[]; begin: number; end: number },
  ): void {
    if (m.type !== NLMSG_ERROR) return;
    const e = parseNlError(m);
    const i = st.index.get(m.seq) ?? (m.seq === st.begin || m.seq === st.end ? -1 : undefined);
    if (i === undefined) return; // a stale reply to an earlier request on this socket
    st.pending.delete(m.seq);
    if (e.errno === 0) return;
    st.failures.push({ index: i, errno: e.errno, code: errnoInfo(e.errno).code, ...(e.extAck === undefined ? {} : { extAck: e.extAck }) });
  }

  /** A dump (NLM_F_DUMP) of nf_tables message `msg`; returns the data messages. Throws NetlinkError (e.g. ENOENT). */
  dump(op: string, msg: number, payload: Uint8Array): NlMsg[] {
    return this.dumper.dump(op, nftMsgType(msg), payload);
  }

  /** A dump of nf_tables message `msg` handed to `each` message by message; `restart` before an interrupted dump is sent again (NlSocket.dumpEach). */
  dumpEach(op: string, msg: number, payload: Uint8Array, each: (m: NlMsg) => void, restart: () => void): void {
    this.dumper.dumpEach(op, nftMsgType(msg), payload, each, restart);
  }
}

/** Runs `fn` with a socket opened in the calling thread's netns, closing it afterwards (also on throw). */
export function withNfnlSocket<T>(fn: (sock: NfnlSocket) => T): T {
  const sock = NfnlSocket.open();
  try {
    return fn(sock);
  } finally {
    sock.close();
  }
}

const kept = new Map<string, NfnlSocket>();

/**
 * A socket for the calling thread's current netns, opened on first use and kept open for the rest of
 * the process (one per netns, told apart by the nsfs inode). For short-lived plugin processes: closing
 * a NETLINK_NETFILTER socket right after a commit that deleted elements blocks for an RCU grace period
 * (10-25 ms measured), because nf_tables' NETLINK_URELEASE handler flushes the pending transaction
 * clean-up work (nft_rcv_nl_event, net/netfilter/nf_tables_api.c). Left open, the socket is closed by
 * the process exit, by when that work has usually finished.
 */
export function keptNfnlSocket(): NfnlSocket {
  const st = statSync('/proc/thread-self/ns/net', { bigint: true });
  const key = `${st.dev}:${st.ino}`;
  let sock = kept.get(key);
  if (sock === undefined) {
    sock = NfnlSocket.open();
    kept.set(key, sock);
  }
  return sock;
}
