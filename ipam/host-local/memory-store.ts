// An in-memory Store for unit tests and dry runs: same semantics as the disk store, no files.
import type { IpAddr } from '../../lib/ip/index.ts';
import { formatIp } from '../../lib/ip/index.ts';
import type { Holder } from '../../lib/attach/host-local-files.ts';
import type { Allocation, Store } from './store.ts';

/** Store kept in a Map; `seed` pre-populates reservations (e.g. to simulate legacy files). */
export class MemoryStore implements Store {
  private readonly held = new Map<string, Allocation>();
  private readonly last = new Map<number, IpAddr>();
  private locked = false;
  /** How many times withLock ran (tests assert every mutation happened under the lock). */
  lockCount = 0;

  constructor(seed: ReadonlyArray<Allocation> = []) {
    for (const a of seed) this.held.set(formatIp(a.ip), a);
  }

  withLock<T>(fn: () => T): T {
    if (this.locked) throw new Error('MemoryStore: lock is not re-entrant');
    this.locked = true;
    this.lockCount++;
    try {
      return fn();
    } finally {
      this.locked = false;
    }
  }

  private assertLocked(): void {
    if (!this.locked) throw new Error('MemoryStore: used outside withLock');
  }

  reserve(containerId: string, ifname: string, ip: IpAddr, rangeSetIndex: number): boolean {
    this.assertLocked();
    const key = formatIp(ip);
    if (this.held.has(key)) return false;
    const holder: Holder = { containerId: containerId.trim(), ifname };
    this.held.set(key, { ip, ...holder });
    this.last.set(rangeSetIndex, ip);
    return true;
  }

  lastReservedIp(rangeSetIndex: number): IpAddr | null {
    this.assertLocked();
    return this.last.get(rangeSetIndex) ?? null;
  }

  /** Test hook: set (or clear with null) the last reserved address of a range set. */
  setLastReservedIp(rangeSetIndex: number, ip: IpAddr | null): void {
    if (ip === null) this.last.delete(rangeSetIndex);
    else this.last.set(rangeSetIndex, ip);
  }

  list(): Allocation[] {
    this.assertLocked();
    return [...this.held.values()];
  }

  release(ip: IpAddr): boolean {
    this.assertLocked();
    return this.held.delete(formatIp(ip));
  }

  /** Snapshot for assertions: address text -> holder, without taking the lock. */
  snapshot(): Map<string, Holder> {
    return new Map([...this.held].map(([k, a]) => [k, { containerId: a.containerId, ifname: a.ifname }]));
  }

  close(): void {}
}
