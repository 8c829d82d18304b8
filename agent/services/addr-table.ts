// Positive integers keyed by an address (addrKey: canonical IPv4 as its 32-bit value, anything else as
// text), for the proxy's per-endpoint counts. IPv4 keys live in an open-addressing hash table of two
// typed arrays (8 bytes a slot, at most 3/4 full): at 10,000 Services x 10 endpoints a JS Map of the
// same 100,000 entries takes ~3.7 MiB (24 bytes an entry plus buckets, on a table of the next power
// of two) and, while it grows, its old table beside the new one. Other keys (IPv6) go to a Map. Pure.

const MIN_BITS = 4;

/** Fibonacci hashing: the top `bits` bits of k * 2^32/phi spread consecutive addresses over the table. */
function home(k: number, shift: number): number {
  return Math.imul(k, 0x9e3779b1) >>> shift;
}

/** int32 keys -> positive int32 values; 0 marks an empty slot, so a value is never 0. */
export class IntTable {
  private slotKeys: Int32Array;
  private vals: Int32Array;
  private bits: number;
  private count = 0;

  constructor() {
    this.bits = MIN_BITS;
    this.slotKeys = new Int32Array(1 << MIN_BITS);
    this.vals = new Int32Array(1 << MIN_BITS);
  }

  get size(): number {
    return this.count;
  }

  private slotOf(k: number): number {
    const mask = this.slotKeys.length - 1;
    for (let i = home(k, 32 - this.bits); ; i = (i + 1) & mask) {
      if (this.vals[i] === 0 || this.slotKeys[i] === k) return i;
    }
  }

  get(k: number): number | undefined {
    const v = this.vals[this.slotOf(k | 0)] ?? 0;
    return v === 0 ? undefined : v;
  }

  /** Sets k to v (a positive int32). */
  set(k: number, v: number): void {
    if (!(v > 0 && v <= 0x7fffffff && Number.isInteger(v))) throw new RangeError(`IntTable: value ${v} is not a positive int32`);
    k |= 0;
    let i = this.slotOf(k);
    if (this.vals[i] === 0) {
      if ((this.count + 1) * 4 > this.slotKeys.length * 3) {
        this.resize(this.bits + 1);
        i = this.slotOf(k);
      }
      this.count++;
      this.slotKeys[i] = k;
    }
    this.vals[i] = v;
  }

  delete(k: number): boolean {
    let i = this.slotOf(k | 0);
    if (this.vals[i] === 0) return false;
    // Backward-shift deletion: later entries of the probe run move up, so no tombstones are left.
    const mask = this.slotKeys.length - 1;
    const shift = 32 - this.bits;
    for (let j = (i + 1) & mask; this.vals[j] !== 0; j = (j + 1) & mask) {
      const h = home(this.slotKeys[j] ?? 0, shift);
      if (((j - h) & mask) >= ((j - i) & mask)) {
        this.slotKeys[i] = this.slotKeys[j] ?? 0;
        this.vals[i] = this.vals[j] ?? 0;
        i = j;
      }
    }
    this.vals[i] = 0;
    this.slotKeys[i] = 0;
    this.count--;
    // Shrinks when an eighth full, so a cluster that lost most of its endpoints gives the memory back.
    if (this.bits > MIN_BITS && this.count * 8 < this.slotKeys.length) this.resize(this.bits - 1);
    return true;
  }

  /** The keys held now, as a copy (changes to the table do not disturb a caller walking it). */
  keys(): Int32Array {
    const out = new Int32Array(this.count);
    let n = 0;
    for (let s = 0; s < this.slotKeys.length; s++) if (this.vals[s] !== 0) out[n++] = this.slotKeys[s] ?? 0;
    return out;
  }

  clear(): void {
    this.count = 0;
    this.bits = MIN_BITS;
    this.slotKeys = new Int32Array(1 << MIN_BITS);
    this.vals = new Int32Array(1 << MIN_BITS);
  }

  private resize(bits: number): void {
    const { slotKeys: keys, vals } = this;
    this.bits = bits;
    this.slotKeys = new Int32Array(1 << bits);
    this.vals = new Int32Array(1 << bits);
    const mask = this.slotKeys.length - 1;
    for (let s = 0; s < keys.length; s++) {
      const v = vals[s] ?? 0;
      if (v === 0) continue;
      const k = keys[s] ?? 0;
      let i = home(k, 32 - bits);
      while (this.vals[i] !== 0) i = (i + 1) & mask;
      this.slotKeys[i] = k;
      this.vals[i] = v;
    }
  }
}

/** Positive integers by addrKey: numbers in an IntTable, text in a Map. */
export class AddrTable {
  private readonly v4 = new IntTable();
  private readonly text = new Map<string, number>();

  get size(): number {
    return this.v4.size + this.text.size;
  }

  get(a: number | string): number | undefined {
    return typeof a === 'number' ? this.v4.get(a) : this.text.get(a);
  }

  /** Sets a to v (a positive int32). */
  set(a: number | string, v: number): void {
    if (typeof a === 'number') this.v4.set(a, v);
    else this.text.set(a, v);
  }

  delete(a: number | string): boolean {
    return typeof a === 'number' ? this.v4.delete(a) : this.text.delete(a);
  }

  clear(): void {
    this.v4.clear();
    this.text.clear();
  }
}
