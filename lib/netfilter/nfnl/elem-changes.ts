// Ordered element changes to the sets and maps of one table as nf_tables commands for ONE batch:
// runs of changes with the same verb and set share a NEWSETELEM/DELSETELEM message (bounded, since a
// netlink attribute's length is 16 bits). Deletes are strict: an absent element fails the batch, so a
// caller that assumed the kernel's state learns that it drifted.
import { NLM_F_CREATE } from '../../netlink/constants.ts';
import { validateFamily, validateName } from '../validate.ts';
import type { NftTableRef } from '../types.ts';
import { NFT_MSG_DELSETELEM, NFT_MSG_NEWSETELEM } from './constants.ts';
import { formatSetElemPayload, type NfnlElem } from './elem.ts';
import type { NfnlCommand } from './socket.ts';

/** One element change: add (idempotent for an identical element) or delete (by key). */
export interface NfnlElemChange {
  readonly verb: 'add' | 'delete';
  readonly set: string;
  readonly elem: NfnlElem;
}

/** nlmsghdr bytes each command of a batch adds to its payload. */
const NLMSG_HDRLEN = 16;

/** The commands for `changes`, in order, at most `perMessage` elements per message. */
export function elemChangeCommands(table: NftTableRef, changes: readonly NfnlElemChange[], perMessage = 200): NfnlCommand[] {
  const family = validateFamily(table.family);
  const name = validateName('table', table.name);
  const out: NfnlCommand[] = [];
  let run: NfnlElemChange[] = [];
  const flush = (): void => {
    const first = run[0];
    if (first === undefined) return;
    const elems = first.verb === 'add' ? run.map((c) => c.elem) : run.map((c) => ({ key: c.elem.key, ...(c.elem.flags === undefined ? {} : { flags: c.elem.flags }) }));
    const payload = formatSetElemPayload(family, name, validateName('set', first.set), elems);
    out.push(first.verb === 'add' ? { msg: NFT_MSG_NEWSETELEM, flags: NLM_F_CREATE, payload } : { msg: NFT_MSG_DELSETELEM, payload });
    run = [];
  };
  for (const c of changes) {
    const first = run[0];
    if (first !== undefined && (first.verb !== c.verb || first.set !== c.set || run.length >= perMessage)) flush();
    run.push(c);
  }
  flush();
  return out;
}

/** The size of the datagram a batch of `cmds` takes (BATCH_BEGIN and END included). */
export function batchBytes(cmds: readonly NfnlCommand[]): number {
  return cmds.reduce((n, c) => n + NLMSG_HDRLEN + ((c.payload.length + 3) & ~3), 2 * (NLMSG_HDRLEN + 4));
}
