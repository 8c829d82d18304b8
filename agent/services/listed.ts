// The large parts of a Service table listing in compact form, for the full sync that consumes them:
// at 10,000 Services x 10 endpoints the hairpin set (100,000 `a . a` pairs) and the endpoint slots
// (10,000 keys x 10 slots) as string Maps were ~17 MiB of the 5-minute resync's peak. Both are Maps
// to their readers (kernel.ts fills them; full-sync.ts, diff.ts and weft doctor read and consume
// them); only their storage differs. Pure.
import { formatIPv4, parseV4Number } from '../../lib/ip/index.ts';
import { IntTable } from './addr-table.ts';

/** The address of `a . a` when both halves are the same canonical IPv4 text; else null. */
function samePairV4(k: string): number | null {
  const cut = k.indexOf(' . ');
  if (cut < 0 || k.length !== cut * 2 + 3 || !k.endsWith(k.slice(0, cut))) return null;
  return parseV4Number(k.slice(0, cut));
}

/** A hairpin set's elements (value ''): IPv4 `a . a` pairs as numbers in an IntTable, anything else as itself. */
export class ListedPairs extends Map<string, string> {
  private readonly v4 = new IntTable();

  override get size(): number {
    return super.size + this.v4.size;
  }

  override set(k: string, v: string): this {
    const a = v === '' ? samePairV4(k) : null;
    if (a !== null) {
      super.delete(k);
      this.v4.set(a, 1);
    } else {
      if (v !== '') this.deleteV4(k);
      super.set(k, v);
    }
    return this;
  }

  override get(k: string): string | undefined {
    const a = samePairV4(k);
    return a !== null && this.v4.get(a) !== undefined ? '' : super.get(k);
  }

  override has(k: string): boolean {
    return this.get(k) !== undefined;
  }

  override delete(k: string): boolean {
    return this.deleteV4(k) || super.delete(k);
  }

  private deleteV4(k: string): boolean {
    const a = samePairV4(k);
    return a !== null && this.v4.delete(a);
  }

  override clear(): void {
    this.v4.clear();
    super.clear();
  }

  override *entries(): MapIterator<[string, string]> {
    yield* super.entries();
    for (const a of this.v4.keys()) {
      const ip = formatIPv4(a >>> 0);
      yield [`${ip} . ${ip}`, ''];
    }
  }

  override *keys(): MapIterator<string> {
    for (const [k] of this.entries()) yield k;
  }

  override *values(): MapIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }

  override [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  override forEach(fn: (v: string, k: string, m: Map<string, string>) => void, self?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(self, v, k, this);
  }
}

/** `addr . port` of a canonical IPv4 address as addr * 65536 + port (exact in a double); else null. */
function packEndpoint(ep: string): number | null {
  const cut = ep.indexOf(' . ');
  if (cut < 0) return null;
  const a = parseV4Number(ep.slice(0, cut));
  const p = ep.slice(cut + 3);
  const port = Number(p);
  return a === null || !Number.isInteger(port) || port < 0 || port > 65535 || String(port) !== p ? null : a * 65536 + port;
}

function unpackEndpoint(n: number): string {
  return `${formatIPv4(Math.floor(n / 65536))} . ${n % 65536}`;
}

/**
 * Endpoint slots by slots name (`ep4t/<address> . <port>`): slot -> `addr . port`. A key whose slots all
 * hold IPv4 endpoints keeps them as numbers in an array indexed by slot (holes for empty slots);
 * `get` gives a new Map each time, to read (assignSlots takes a ReadonlyMap). Filled through `note`.
 */
export class ListedSlots extends Map<string, ReadonlyMap<number, string>> {
  private readonly packed = new Map<string, number[] | Map<number, string>>();

  /** Slot `slot` of `name` holds `endpoint`. */
  note(name: string, slot: number, endpoint: string): void {
    let cur = this.packed.get(name);
    const n = packEndpoint(endpoint);
    if (Array.isArray(cur) && (n === null || !Number.isInteger(slot) || slot < 0 || slot > 65535)) {
      cur = this.unpack(cur);
      this.packed.set(name, cur);
    }
    if (cur === undefined) {
      if (n !== null && Number.isInteger(slot) && slot >= 0 && slot <= 65535) {
        const arr: number[] = [];
        arr[slot] = n;
        this.packed.set(name, arr);
      } else this.packed.set(name, new Map([[slot, endpoint]]));
    } else if (Array.isArray(cur)) cur[slot] = n as number;
    else cur.set(slot, endpoint);
  }

  private unpack(arr: readonly number[]): Map<number, string> {
    const m = new Map<number, string>();
    arr.forEach((n, slot) => m.set(slot, unpackEndpoint(n)));
    return m;
  }

  override get size(): number {
    return this.packed.size;
  }

  override get(name: string): Map<number, string> | undefined {
    const cur = this.packed.get(name);
    return cur === undefined ? undefined : Array.isArray(cur) ? this.unpack(cur) : new Map(cur);
  }

  override has(name: string): boolean {
    return this.packed.has(name);
  }

  override set(name: string, slots: ReadonlyMap<number, string>): this {
    this.packed.delete(name);
    for (const [slot, ep] of slots) this.note(name, slot, ep);
    if (slots.size === 0) this.packed.set(name, new Map());
    return this;
  }

  override delete(name: string): boolean {
    return this.packed.delete(name);
  }

  override clear(): void {
    this.packed.clear();
  }

  override *entries(): MapIterator<[string, ReadonlyMap<number, string>]> {
    for (const name of [...this.packed.keys()]) {
      const m = this.get(name);
      if (m !== undefined) yield [name, m];
    }
  }

  override keys(): MapIterator<string> {
    return this.packed.keys();
  }

  override *values(): MapIterator<ReadonlyMap<number, string>> {
    for (const [, m] of this.entries()) yield m;
  }

  override [Symbol.iterator](): MapIterator<[string, ReadonlyMap<number, string>]> {
    return this.entries();
  }

  override forEach(fn: (v: ReadonlyMap<number, string>, k: string, m: Map<string, ReadonlyMap<number, string>>) => void, self?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(self, v, k, this);
  }
}
