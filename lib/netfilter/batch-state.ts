// Rendering helpers for NftBatch: set/chain bodies and the steps that depend on the listed table state.
import { invalidValue } from './errors.ts';
import { formatComment } from './validate.ts';
import type { NftBaseChainSpec, NftDataType, NftMapSpec, NftSetSpec, NftTableState } from './types.ts';

/** A batch step resolved against the table state at apply time. */
export type StatefulOp =
  | { readonly kind: 'ensureRule'; readonly chain: string; readonly expr: string; readonly tag: string; readonly replaces?: string }
  | { readonly kind: 'deleteRulesByTag'; readonly chain: string; readonly tag: string }
  | { readonly kind: 'deleteChain'; readonly chain: string }
  | { readonly kind: 'deleteSet'; readonly set: string }
  | { readonly kind: 'flushChain'; readonly chain: string }
  | { readonly kind: 'noteChain'; readonly chain: string }
  | { readonly kind: 'noteSet'; readonly set: string; readonly setKind: 'set' | 'map' }
  | { readonly kind: 'deleteTable' };

const DATA_TYPES = new Set<NftDataType>(['ipv4_addr', 'ipv6_addr', 'inet_proto', 'inet_service', 'ether_addr', 'ifname', 'mark', 'verdict']);
const FLAGS = new Set(['interval', 'timeout', 'constant', 'dynamic']);
const CHAIN_TYPES = new Set(['filter', 'nat', 'route']);
const HOOKS = new Set(['prerouting', 'input', 'forward', 'output', 'postrouting']);
const PRIORITIES = new Set(['raw', 'mangle', 'dstnat', 'filter', 'security', 'srcnat']);

function formatTypes(field: string, t: NftDataType | readonly NftDataType[]): string {
  const list: readonly unknown[] = Array.isArray(t) ? t : [t];
  if (list.length === 0) throw invalidValue(field, t, 'expected at least one type');
  for (const x of list) if (!DATA_TYPES.has(x as NftDataType)) throw invalidValue(field, x, `expected one of ${[...DATA_TYPES].join(', ')}`);
  return list.join(' . ');
}

/** Formats `{ type a . b [: c]; flags x,y; comment "..."; }` for `add set` / `add map`. */
export function formatSetBody(spec: NftSetSpec | NftMapSpec): string {
  let type = formatTypes('set type', spec.type);
  if ('data' in spec) type += ` : ${formatTypes('map data type', spec.data)}`;
  const parts = [`type ${type};`];
  if (spec.flags !== undefined && spec.flags.length > 0) {
    for (const f of spec.flags) if (!FLAGS.has(f)) throw invalidValue('set flag', f, `expected one of ${[...FLAGS].join(', ')}`);
    parts.push(`flags ${spec.flags.join(',')};`);
  }
  if (spec.comment !== undefined) parts.push(`comment ${formatComment('set comment', spec.comment)};`);
  return `{ ${parts.join(' ')} }`;
}

/** Formats `{ type nat hook postrouting priority srcnat; policy accept; }`. */
export function formatBaseChain(base: NftBaseChainSpec): string {
  if (!CHAIN_TYPES.has(base.type)) throw invalidValue('chain type', base.type, 'expected filter, nat or route');
  if (!HOOKS.has(base.hook)) throw invalidValue('chain hook', base.hook, `expected one of ${[...HOOKS].join(', ')}`);
  const prio = base.priority;
  const prioOk = typeof prio === 'number' ? Number.isInteger(prio) && Math.abs(prio) <= 0x7fffffff : PRIORITIES.has(prio);
  if (!prioOk) throw invalidValue('chain priority', prio, `expected an integer or one of ${[...PRIORITIES].join(', ')}`);
  if (base.policy !== undefined && base.policy !== 'accept' && base.policy !== 'drop') {
    throw invalidValue('chain policy', base.policy, 'expected accept or drop');
  }
  const policy = base.policy === undefined ? '' : ` policy ${base.policy};`;
  return `{ type ${base.type} hook ${base.hook} priority ${String(prio)};${policy} }`;
}

/** Tracks which chains/sets/tagged rules exist while a batch is rendered, so later steps see earlier ones. */
export function simulate(state: NftTableState | null, prefix: string): { apply(op: StatefulOp): string[] } {
  // chain -> tagged rules (tag, handle; handle -1 = added by this batch)
  const chains = new Map<string, { tag: string | undefined; handle: number }[]>();
  const sets = new Map<string, 'set' | 'map'>([...(state?.sets.values() ?? [])].map((x) => [x.name, x.kind]));
  for (const [name, c] of state?.chains ?? []) chains.set(name, c.rules.map((r) => ({ tag: r.comment, handle: r.handle })));
  const rule = (chain: string) => chains.get(chain) ?? [];

  return {
    apply(op: StatefulOp): string[] {
      switch (op.kind) {
        case 'ensureRule': {
          const tagged = rule(op.chain).filter((r) => r.tag === op.tag);
          // Keep the first; concurrent callers may each have added one: remove the copies, and the
          // older versions of this rule when `replaces` is given.
          const { replaces } = op;
          const stale = rule(op.chain).filter((r) => replaces !== undefined && r.tag !== op.tag && r.tag?.startsWith(replaces) === true);
          const extras = [...tagged.slice(1), ...stale].filter((r) => r.handle >= 0);
          if (extras.length > 0) chains.set(op.chain, rule(op.chain).filter((r) => !extras.includes(r)));
          const lines = extras.map((r) => `delete rule ${prefix} ${op.chain} handle ${r.handle}`);
          if (tagged.length > 0) return lines;
          chains.set(op.chain, [...rule(op.chain), { tag: op.tag, handle: -1 }]);
          return [...lines, `add rule ${prefix} ${op.chain} ${op.expr} comment "${op.tag}"`];
        }
        case 'deleteRulesByTag': {
          const tagged = rule(op.chain).filter((r) => r.tag === op.tag);
          if (chains.has(op.chain)) chains.set(op.chain, rule(op.chain).filter((r) => r.tag !== op.tag));
          if (tagged.some((r) => r.handle < 0)) throw invalidValue('batch', op.tag, 'cannot delete a rule added in the same batch');
          return tagged.map((r) => `delete rule ${prefix} ${op.chain} handle ${r.handle}`);
        }
        case 'noteChain':
          if (!chains.has(op.chain)) chains.set(op.chain, []);
          return [];
        case 'noteSet':
          sets.set(op.set, op.setKind);
          return [];
        case 'flushChain':
          if (chains.has(op.chain)) chains.set(op.chain, []);
          return [];
        case 'deleteChain': {
          if (!chains.has(op.chain)) return [];
          chains.delete(op.chain);
          // A chain must be empty to be deleted: flush it in the same transaction.
          return [`flush chain ${prefix} ${op.chain}`, `delete chain ${prefix} ${op.chain}`];
        }
        case 'deleteSet': {
          const kind = sets.get(op.set);
          if (kind === undefined) return [];
          sets.delete(op.set);
          return [`delete ${kind} ${prefix} ${op.set}`];
        }
        case 'deleteTable':
          chains.clear();
          sets.clear();
          return [];
      }
    },
  };
}
