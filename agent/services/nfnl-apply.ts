// The element-only part of a sync over nf_tables netlink, in-process (no `nft`, no table read): the
// text form of each change (as the diff writes it) -> key and data bytes of its map's type -> one
// batch. Runs in the netns the socket was opened in (weftd's, the node's).
import { formatKeyBytes } from '../../lib/netfilter/nfnl/key-codec.ts';
import { batchBytes, elemChangeCommands, type NfnlElemChange } from '../../lib/netfilter/nfnl/elem-changes.ts';
import type { NfnlElem, NfnlVerdict } from '../../lib/netfilter/nfnl/elem.ts';
import type { NfnlCommand, NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import type { NftDataType } from '../../lib/netfilter/types.ts';
import { AFFINITY_MAP, SVC_TABLE } from './content.ts';
import { isSharedMap } from './slots.ts';
import type { ElemOp } from './diff.ts';

type ValueType = Exclude<NftDataType, 'verdict'>;

const A4: ValueType = 'ipv4_addr';
const A6: ValueType = 'ipv6_addr';
const SVC4: ValueType[] = [A4, 'inet_proto', 'inet_service'];
const SVC6: ValueType[] = [A6, 'inet_proto', 'inet_service'];
const NP: ValueType[] = ['inet_proto', 'inet_service'];

/** Key types of the fixed maps and sets (content.ts DYNAMIC_MAPS / DYNAMIC_SETS); `verdict`: a verdict map. */
const FIXED: Record<string, { key: ValueType[]; verdict: boolean }> = {
  svc4: { key: SVC4, verdict: true }, svc6: { key: SVC6, verdict: true },
  np4: { key: NP, verdict: true }, np6: { key: NP, verdict: true },
  noep4: { key: SVC4, verdict: true }, noep6: { key: SVC6, verdict: true },
  noepnp4: { key: NP, verdict: true }, noepnp6: { key: NP, verdict: true },
  pick4: { key: SVC4, verdict: true }, pick6: { key: SVC6, verdict: true },
  pickl4: { key: SVC4, verdict: true }, pickl6: { key: SVC6, verdict: true },
  picknp4: { key: NP, verdict: true }, picknp6: { key: NP, verdict: true },
  picknpl4: { key: NP, verdict: true }, picknpl6: { key: NP, verdict: true },
  affrec4: { key: SVC4, verdict: true }, affrecnp4: { key: NP, verdict: true },
  hairpin4: { key: [A4, A4], verdict: false }, hairpin6: { key: [A6, A6], verdict: false },
};

/** A datagram larger than this goes through `nft -f` instead (the socket's send buffer is ~208 KiB by default). */
export const MAX_BATCH_BYTES = 150_000;

function parts(text: string): string[] {
  return text.split(' . ').map((s) => s.trim());
}

function parseVerdict(v: string): NfnlVerdict {
  const [verb, chain] = v.split(' ');
  if ((verb === 'goto' || verb === 'jump') && chain !== undefined) return { verdict: verb, chain };
  if (verb === 'drop' || verb === 'accept' || verb === 'return' || verb === 'continue') return { verdict: verb };
  throw new Error(`service table: unknown verdict ${JSON.stringify(v)}`);
}

/** One element change as netlink bytes. */
export function encodeElemOp(op: ElemOp): NfnlElemChange {
  const fixed = FIXED[op.map];
  let elem: NfnlElem;
  if (fixed !== undefined) {
    const key = formatKeyBytes(fixed.key, parts(op.key));
    elem = op.verb === 'add' && fixed.verdict ? { key, data: parseVerdict(op.value) } : { key };
  } else if (isSharedMap(op.map)) {
    // Shared slots: address . port . slot, or nodePort . slot (the slot 32 bits in host order, as numgen writes it) -> address . port.
    const a = /6[tu]$/.test(op.map) ? A6 : A4;
    const key = formatKeyBytes(op.map.startsWith('epn') ? ['inet_service', 'mark'] : [a, 'inet_service', 'mark'], parts(op.key));
    elem = op.verb === 'add' ? { key, data: formatKeyBytes([a, 'inet_service'], parts(op.value)) } : { key };
  } else if (op.map === AFFINITY_MAP && op.verb === 'delete') {
    elem = { key: formatKeyBytes([A4, A4, 'inet_proto', 'inet_service'], parts(op.key)) };
  } else {
    throw new Error(`service table: no netlink encoding for ${op.verb} in ${op.map}`);
  }
  return { verb: op.verb, set: op.map, elem };
}

/** The batch commands of `ops`, or undefined when they would not fit in one datagram. */
export function elemOpCommands(ops: readonly ElemOp[]): NfnlCommand[] | undefined {
  const cmds = elemChangeCommands(SVC_TABLE, ops.map(encodeElemOp));
  return batchBytes(cmds) > MAX_BATCH_BYTES ? undefined : cmds;
}

/** Element changes tried per batch first; a batch over the byte limit is halved until it fits. */
const BATCH_OPS = 1000;

/**
 * `ops` in order as consecutive batches of at most `maxBytes` each (a single change larger than that
 * alone), encoded one batch at a time: a cold start's hundreds of thousands of elements never sit
 * in memory as netlink bytes all at once.
 */
export function* elemOpBatches(ops: readonly ElemOp[], maxBytes = MAX_BATCH_BYTES): Generator<NfnlCommand[]> {
  let i = 0;
  let n = BATCH_OPS;
  while (i < ops.length) {
    const cmds = elemChangeCommands(SVC_TABLE, ops.slice(i, i + n).map(encodeElemOp));
    if (n > 1 && batchBytes(cmds) > maxBytes) {
      n >>= 1;
      continue;
    }
    yield cmds;
    i += n;
  }
}

/** Commits element commands as one transaction; throws NfnlBatchError when the kernel refuses any (nothing applied). */
export function commitElemCommands(sock: NfnlSocket, cmds: readonly NfnlCommand[]): void {
  sock.commit(`elements of ${SVC_TABLE.family} ${SVC_TABLE.name}`, cmds);
}
