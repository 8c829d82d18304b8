// Set and map elements over nf_tables netlink: add and delete in one transaction (deletes forgiving
// ENOENT, as DEL paths need), list a set's elements and find a container's elements by comment.
import { isNotFound } from '../../netlink/errors.ts';
import { NLM_F_CREATE } from '../../netlink/constants.ts';
import { formatComment, validateFamily, validateName } from '../validate.ts';
import type { NftTableRef } from '../types.ts';
import { NFT_MSG_DELSETELEM, NFT_MSG_GETSETELEM, NFT_MSG_NEWSETELEM, NFT_SET_ELEM_INTERVAL_END } from './constants.ts';
import { formatSetElemPayload, parseSetElemPayload, type NfnlElem, type NfnlListedElem } from './elem.ts';
import { prefixInterval } from './key-codec.ts';
import { NfnlBatchError, type NfnlCommand, type NfnlSocket } from './socket.ts';

const ENOENT = 2;

/** The elements of an interval set that hold one address prefix: start, and end flagged INTERVAL_END (omitted at the top of the address space). */
export function prefixElems(cidr: string, opts: { comment?: string } = {}): NfnlElem[] {
  const iv = prefixInterval(cidr);
  const start: NfnlElem = opts.comment === undefined ? { key: iv.start } : { key: iv.start, comment: opts.comment };
  return iv.end === null ? [start] : [start, { key: iv.end, flags: NFT_SET_ELEM_INTERVAL_END }];
}

/**
 * Element changes to sets of one table, committed as ONE nf_tables transaction (all or nothing) over
 * an NfnlSocket, which acts in the netns it was opened in. Names and comments are validated as for
 * nft scripts, so what this writes is what `nft list` can show and `nft -f` could have written.
 */
export class NfnlElemBatch {
  readonly table: NftTableRef;
  private readonly cmds: Array<NfnlCommand & { readonly forgiving: boolean }> = [];

  constructor(table: NftTableRef) {
    this.table = { family: validateFamily(table.family), name: validateName('table', table.name) };
  }

  private payload(set: string, elems: readonly NfnlElem[]): Uint8Array {
    for (const e of elems) if (e.comment !== undefined) formatComment('element comment', e.comment);
    return formatSetElemPayload(this.table.family, this.table.name, validateName('set', set), elems);
  }

  /** Idempotent: adds elements (an identical existing element is kept; NLM_F_CREATE without NLM_F_EXCL). */
  add(set: string, elems: readonly NfnlElem[]): this {
    if (elems.length > 0) this.cmds.push({ msg: NFT_MSG_NEWSETELEM, flags: NLM_F_CREATE, payload: this.payload(set, elems), forgiving: false });
    return this;
  }

  /** Deletes elements by key; an absent element (or set, or table) is not an error. One command per element. */
  delete(set: string, elems: readonly NfnlElem[]): this {
    for (const e of elems) {
      this.cmds.push({ msg: NFT_MSG_DELSETELEM, payload: this.payload(set, [{ key: e.key, ...(e.flags === undefined ? {} : { flags: e.flags }) }]), forgiving: true });
    }
    return this;
  }

  /** Number of queued commands. */
  get size(): number {
    return this.cmds.length;
  }

  /**
   * Commits the batch. A delete refused with ENOENT is dropped and the rest retried (the kernel applied
   * nothing of the refused batch); any other failure throws NfnlBatchError with the kernel's errno.
   */
  commit(sock: NfnlSocket): void {
    let cmds = this.cmds.slice();
    for (;;) {
      try {
        sock.commit(`nf_tables elements of ${this.table.family} ${this.table.name}`, cmds);
        return;
      } catch (e) {
        if (!(e instanceof NfnlBatchError) || e.failures.length === 0) throw e;
        const gone = new Set(e.failures.filter((f) => f.errno === ENOENT && cmds[f.index]?.forgiving === true).map((f) => f.index));
        if (gone.size !== e.failures.length) throw e;
        cmds = cmds.filter((_, i) => !gone.has(i));
      }
    }
  }
}

/** Every element of a set or map, as the kernel lists it; null when the set or its table does not exist. */
export function listSetElems(sock: NfnlSocket, table: NftTableRef, set: string): NfnlListedElem[] | null {
  let out: NfnlListedElem[] = [];
  return eachSetElem(sock, table, set, (e) => { out.push(e); }, () => { out = []; }) ? out : null;
}

/**
 * Every element of a set or map handed to `each` one dump message at a time (a 100,000-element map
 * is never held whole); `restart` is called before an interrupted dump is read again. False when
 * the set or its table does not exist.
 */
export function eachSetElem(sock: NfnlSocket, table: NftTableRef, set: string, each: (e: NfnlListedElem) => void, restart: () => void): boolean {
  const payload = formatSetElemPayload(validateFamily(table.family), validateName('table', table.name), validateName('set', set));
  try {
    sock.dumpEach(`list elements of ${table.family} ${table.name} ${set}`, NFT_MSG_GETSETELEM, payload, (m) => {
      for (const e of parseSetElemPayload(m.payload).elems) each(e);
    }, restart);
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

/** The elements of a set whose comment is `comment` (e.g. `<containerID>/<ifname>`); empty when the set is absent. */
export function findSetElemsByComment(sock: NfnlSocket, table: NftTableRef, set: string, comment: string): NfnlListedElem[] {
  return (listSetElems(sock, table, set) ?? []).filter((e) => e.comment === comment);
}
