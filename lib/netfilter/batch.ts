// NftBatch: builds one nft transaction script for one weft-owned table and applies it with one `nft -f -`.
import { invalidValue, NftError } from './errors.ts';
import type { NftExpr } from './expr.ts';
import { listTable } from './list.ts';
import { runNft } from './run.ts';
import { formatComment, formatKey, validateFamily, validateName } from './validate.ts';
import type { NftBaseChainSpec, NftKey, NftMapSpec, NftRunOptions, NftSetSpec, NftTableRef, NftTableState } from './types.ts';
import { formatBaseChain, formatSetBody, simulate, type StatefulOp } from './batch-state.ts';

type Op = { readonly kind: 'line'; readonly text: string; readonly effect?: StatefulOp } | StatefulOp;

/** What apply() did: the script sent (empty when there was nothing to do) and the wall time. */
export interface NftApplyResult {
  readonly script: string;
  readonly durationMs: number;
  readonly listed: boolean;
}

/**
 * One transaction on one table. Every method validates its values and only records a step;
 * `apply()` sends the whole script to a single `nft -f -`, so the kernel applies all or nothing.
 * Steps named ensure* are idempotent. Runs in the caller's netns unless `netnsPath` is given.
 */
export class NftBatch {
  readonly table: NftTableRef;
  private readonly ops: Op[] = [];

  constructor(table: NftTableRef) {
    this.table = { family: validateFamily(table.family), name: validateName('table', table.name) };
  }

  private get prefix(): string {
    return `${this.table.family} ${this.table.name}`;
  }

  private line(text: string, effect?: StatefulOp): this {
    this.ops.push(effect === undefined ? { kind: 'line', text } : { kind: 'line', text, effect });
    return this;
  }

  /** Idempotent: creates the table if absent (`add table` never fails on an existing table). */
  ensureTable(): this {
    return this.line(`add table ${this.prefix}`);
  }

  /** Idempotent: creates a regular chain, or a base chain with hook/priority/policy. */
  ensureChain(name: string, base?: NftBaseChainSpec): this {
    const chain = validateName('chain', name);
    const body = base === undefined ? '' : ` ${formatBaseChain(base)}`;
    return this.line(`add chain ${this.prefix} ${chain}${body}`, { kind: 'noteChain', chain });
  }

  /** Idempotent: creates a set (an existing set with the same type is left as is, elements kept). */
  ensureSet(name: string, spec: NftSetSpec): this {
    const set = validateName('set', name);
    return this.line(`add set ${this.prefix} ${set} ${formatSetBody(spec)}`, { kind: 'noteSet', set, setKind: 'set' });
  }

  /** Idempotent: creates a map (`verdict` data makes it a verdict map). */
  ensureMap(name: string, spec: NftMapSpec): this {
    const set = validateName('map', name);
    return this.line(`add map ${this.prefix} ${set} ${formatSetBody(spec)}`, { kind: 'noteSet', set, setKind: 'map' });
  }

  /** Idempotent for sets: adds an element with an optional comment (e.g. the container ID); `data` for maps. */
  addElement(set: string, key: NftKey, opts: { comment?: string; data?: NftKey } = {}): this {
    return this.line(`add element ${this.prefix} ${validateName('set', set)} { ${formatElement(key, opts)} }`);
  }

  /**
   * Deletes an element and succeeds when it is absent: nft 1.0.6 has no `destroy element` and fails a
   * `delete element` on a missing key (ENOENT), so the element is first added (a no-op if present)
   * and then deleted, in the same transaction. For a map pass `data`: when the key holds other data,
   * the add fails with EEXIST, which protects another owner's mapping.
   */
  deleteElement(set: string, key: NftKey, opts: { data?: NftKey } = {}): this {
    const name = validateName('set', set);
    this.line(`add element ${this.prefix} ${name} { ${formatElement(key, opts)} }`);
    return this.line(`delete element ${this.prefix} ${name} { ${formatKey('element', key)} }`);
  }

  /** Removes every rule of a chain (the chain stays). */
  flushChain(name: string): this {
    const chain = validateName('chain', name);
    return this.line(`flush chain ${this.prefix} ${chain}`, { kind: 'flushChain', chain });
  }

  /** Removes every element of a set or map. */
  flushSet(name: string): this {
    return this.line(`flush set ${this.prefix} ${validateName('set', name)}`);
  }

  /**
   * Appends `expr` (with an optional comment) unconditionally, needing no listing. Not idempotent by
   * itself: pair it with flushChain on a chain the caller owns alone to rewrite that chain in one step.
   */
  appendRule(chain: string, expr: NftExpr, opts: { comment?: string } = {}): this {
    const comment = opts.comment === undefined ? '' : ` comment ${formatComment('rule comment', opts.comment)}`;
    return this.line(`add rule ${this.prefix} ${validateName('chain', chain)} ${expr.text}${comment}`);
  }

  /**
   * Idempotent: appends `expr comment "<tag>"` unless the chain already holds a rule tagged `tag`
   * (extra copies are deleted). With `replaces`, rules whose tag starts with that prefix but differs
   * from `tag` are deleted too: put a hash of the rule in the tag and a changed rule replaces its old self.
   */
  ensureRule(chain: string, expr: NftExpr, tag: string, opts: { replaces?: string } = {}): this {
    const replaces = opts.replaces === undefined ? undefined : validateTag(opts.replaces);
    if (replaces !== undefined && !tag.startsWith(replaces)) throw invalidValue('rule tag', tag, `must start with ${replaces}`);
    const op = { kind: 'ensureRule', chain: validateName('chain', chain), expr: expr.text, tag: validateTag(tag) } as const;
    this.ops.push(replaces === undefined ? op : { ...op, replaces });
    return this;
  }

  /** Deletes (by handle) every rule of `chain` tagged `tag`; nothing when none or the chain is absent. */
  deleteRulesByTag(chain: string, tag: string): this {
    this.ops.push({ kind: 'deleteRulesByTag', chain: validateName('chain', chain), tag: validateTag(tag) });
    return this;
  }

  /** Deletes a chain if present (it must not be the target of a jump). */
  deleteChain(name: string): this {
    this.ops.push({ kind: 'deleteChain', chain: validateName('chain', name) });
    return this;
  }

  /** Deletes a set or map if present (no rule may still reference it); `delete set` or `delete map` by its listed kind. */
  deleteSet(name: string): this {
    this.ops.push({ kind: 'deleteSet', set: validateName('set', name) });
    return this;
  }

  /** Deletes the whole table and succeeds when it is absent (`add table` then `delete table`). */
  deleteTable(): this {
    this.line(`add table ${this.prefix}`);
    return this.line(`delete table ${this.prefix}`, { kind: 'deleteTable' });
  }

  /** True when rendering needs a listing of the table (tagged rules, deletes that depend on presence). */
  get needsState(): boolean {
    return this.ops.some((op) => op.kind !== 'line');
  }

  /** The script for the given table state (`null`: table absent). Pure; used by apply() and golden tests. */
  render(state?: NftTableState | null): string {
    if (this.needsState && state === undefined) {
      throw invalidValue('render state', state, 'this batch depends on the current table; pass a listing or null');
    }
    const lines: string[] = [];
    const sim = simulate(state ?? null, this.prefix);
    for (const op of this.ops) {
      if (op.kind === 'line') {
        lines.push(op.text);
        if (op.effect !== undefined) sim.apply(op.effect);
      } else {
        lines.push(...sim.apply(op));
      }
    }
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }

  /**
   * Applies the batch as ONE `nft -f -` transaction (plus one terse listing first when needsState).
   * A state-dependent batch that fails is re-listed and retried once, since a concurrent caller may
   * have changed the table in between. Throws NftError with nft's stderr.
   */
  apply(opts: NftRunOptions = {}): NftApplyResult {
    const start = performance.now();
    const attempt = (): NftApplyResult => {
      const state = this.needsState ? listTable(this.table, { ...opts, terse: true }) : undefined;
      const script = this.render(state);
      if (script !== '') runNft(['-f', '-'], script, opts);
      return { script, durationMs: performance.now() - start, listed: state !== undefined };
    };
    try {
      return attempt();
    } catch (err) {
      if (!(err instanceof NftError) || err.kind !== 'failed' || !this.needsState) throw err;
      return attempt();
    }
  }
}

function formatElement(key: NftKey, opts: { comment?: string; data?: NftKey }): string {
  const comment = opts.comment === undefined ? '' : ` comment ${formatComment('element comment', opts.comment)}`;
  const data = opts.data === undefined ? '' : ` : ${formatKey('element data', opts.data)}`;
  return `${formatKey('element', key)}${comment}${data}`;
}

function validateTag(tag: string): string {
  formatComment('rule tag', tag);
  return tag;
}
