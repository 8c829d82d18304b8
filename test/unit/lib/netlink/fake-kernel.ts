// A scripted stand-in for the kernel side of a netlink socket, for unit tests of NlSocket and Rtnl.
import { formatNlMsg, parseNlMsgs, type NlMsg } from '../../../../lib/netlink/framing.ts';
import { NLMSG_DONE, NLMSG_ERROR, NLM_F_CAPPED, NLM_F_MULTI } from '../../../../lib/netlink/constants.ts';
import type { NlTransport } from '../../../../lib/netlink/socket.ts';

export const FAKE_PID = 4242;

/** Replies to one request: datagrams (each a list of messages) to queue. */
export type Responder = (req: NlMsg) => Uint8Array[];

/** An ACK (errno 0) or error for `req`, capped like the kernel's success ACKs. */
export function ack(req: NlMsg, errno = 0, pid = FAKE_PID): Uint8Array {
  const p = Buffer.alloc(20);
  p.writeInt32LE(-errno, 0);
  p.writeUInt32LE(16 + req.payload.length, 4);
  p.writeUInt16LE(req.type, 8);
  p.writeUInt16LE(req.flags, 10);
  p.writeUInt32LE(req.seq, 12);
  return formatNlMsg({ type: NLMSG_ERROR, flags: NLM_F_CAPPED, seq: req.seq, pid, payload: p });
}

/** A multipart data message answering `req`. */
export function part(req: NlMsg, type: number, payload: Uint8Array, extraFlags = 0): Uint8Array {
  return formatNlMsg({ type, flags: NLM_F_MULTI | extraFlags, seq: req.seq, pid: FAKE_PID, payload });
}

/** NLMSG_DONE for `req`. */
export function done(req: NlMsg, errno = 0): Uint8Array {
  const p = Buffer.alloc(4);
  p.writeInt32LE(-errno, 0);
  return formatNlMsg({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: req.seq, pid: FAKE_PID, payload: p });
}

/** A transport recording every request and answering through `respond` (default: plain ACK). */
export class FakeKernel implements NlTransport {
  readonly sent: NlMsg[] = [];
  private readonly queue: Uint8Array[] = [];
  closed = false;
  constructor(public respond: Responder = (req) => [ack(req)]) {}

  send(msg: Uint8Array): void {
    for (const req of parseNlMsgs(Uint8Array.from(msg))) {
      this.sent.push(req);
      this.queue.push(...this.respond(req));
    }
  }

  recv(_timeoutMs: number): Uint8Array | null {
    return this.queue.shift() ?? null;
  }

  close(): void {
    this.closed = true;
  }

  /** Payload of the last request. */
  get last(): NlMsg {
    const m = this.sent.at(-1);
    if (!m) throw new Error('no request sent');
    return m;
  }
}
