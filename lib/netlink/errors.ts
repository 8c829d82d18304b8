// NetlinkError: a failed rtnetlink request with the kernel's errno, its name and the extended-ack
// text kept, so callers (DEL paths above all) can tell EEXIST from ENOENT without parsing messages.
import { getSystemErrorMap } from 'node:util';

let errnoTable: Map<number, [string, string]> | undefined;

/** Errno name and libuv's description for a positive errno, e.g. 17 -> ['EEXIST', 'file already exists']. */
export function errnoInfo(errno: number): { code: string; text: string } {
  errnoTable ??= getSystemErrorMap();
  const e = errnoTable.get(-errno);
  return e ? { code: e[0], text: e[1] } : { code: `E${errno}`, text: `errno ${errno}` };
}

/** A netlink request the kernel refused (or a dump it aborted). */
export class NetlinkError extends Error {
  /** Positive errno number as the kernel reported it. */
  readonly errno: number;
  /** Errno name, e.g. 'EEXIST'. */
  readonly code: string;
  /** Extended-ack message from the kernel (NLMSGERR_ATTR_MSG), when given. */
  readonly extAck?: string;
  /** What we were doing, e.g. 'addVeth veth0' or 'RTM_NEWLINK'. */
  readonly op: string;

  constructor(op: string, errno: number, extAck?: string) {
    const { code, text } = errnoInfo(errno);
    super(`${op}: ${text} (${code})${extAck ? `: ${extAck}` : ''}`);
    this.name = 'NetlinkError';
    this.op = op;
    this.errno = errno;
    this.code = code;
    if (extAck !== undefined) this.extAck = extAck;
  }
}

const NOT_FOUND = new Set(['ENOENT', 'ENODEV', 'ESRCH', 'EADDRNOTAVAIL']);

/** True for the errnos that mean "already gone" on delete: ENOENT, ENODEV, ESRCH, EADDRNOTAVAIL. */
export function isNotFound(e: unknown): boolean {
  return e instanceof NetlinkError && NOT_FOUND.has(e.code);
}

/** True for EEXIST (create of something that is already there). */
export function isExists(e: unknown): boolean {
  return e instanceof NetlinkError && e.code === 'EEXIST';
}
