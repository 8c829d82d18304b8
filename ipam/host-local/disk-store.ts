// The disk Store, in the reference's layout so both binaries can share one directory:
// <dataDir>/<network>/<ip> holding "<containerID>\r\n<ifname>", last_reserved_ip.<set index>, and an
// exclusive flock(2) on the regular file <dataDir>/<network>/lock (the reference's go-filemutex does
// the same: LOCK_EX on that file, opened O_RDONLY|O_CREAT with mode 0750). Runs in any netns.
import { closeSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { IpAddr } from '../../lib/ip/index.ts';
import { formatIp, normalizeIp, parseIp } from '../../lib/ip/index.ts';
import { tryAgainLater } from '../../lib/cni/errors.ts';
import { DEFAULT_STALL_TIMEOUT_MS, STALL_TIMEOUT_ENV } from '../../lib/cni/stall.ts';
import { loadIndex, removeIndex, saveIndex } from './holder-index.ts';
import type { Holder } from '../../lib/attach/host-local-files.ts';
import type { Allocation, LockOptions, Store } from './store.ts';
import { holdsAddress, listNetworks } from '../../lib/attach/host-local-list.ts';
import { LAST_RESERVED_PREFIX as LAST_PREFIX, LOCK_FILE, TEMP_PREFIX, formatHolder, parseHolder, reservationKey } from '../../lib/attach/host-local-files.ts';
import { isSysError } from '../../lib/errno/errno.ts';

/**
 * flock(2) as lib/sys exposes it (injected so the store has no native dependency of its own): `wait`
 * true is LOCK_NB, a number a blocking wait of at most that many ms; false when the lock is still held.
 */
export type FlockFn = (fd: number, op: 'sh' | 'ex' | 'un', wait?: boolean | number) => boolean;

/**
 * Reservations from which on the holder index is used. Below, reading the files costs fewer system
 * calls (open, fstat, read, close each) than reading, stamping and rewriting the index on every ADD.
 */
export const INDEX_THRESHOLD = 16;

interface Entry {
  alloc: Allocation;
  file: string;
  /** The file's content as read (or written), for the holder index. */
  content: string;
}

/** A reservation whose address is parsed from its (canonical) name only when someone asks. */
class LazyAllocation implements Allocation {
  readonly containerId: string;
  readonly ifname: string | null;
  private parsed: IpAddr | null = null;
  constructor(
    private readonly key: string,
    holder: Holder,
  ) {
    this.containerId = holder.containerId;
    this.ifname = holder.ifname;
  }
  get ip(): IpAddr {
    this.parsed ??= normalizeIp(parseIp(this.key) as IpAddr);
    return this.parsed;
  }
}

/** Refuses a network name that is not exactly one path component (defence in depth behind validateNetworkName). */
export function assertPathComponent(name: string, what: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0') || Buffer.byteLength(name) > 255) {
    throw new Error(`${what} ${JSON.stringify(name)} is not a single path component`);
  }
}

/** The reference layout under <dataDir>/<network>; created (0755) when missing, like the reference. */
export class DiskStore implements Store {
  readonly dir: string;
  private lockFd: number;
  private readonly flock: FlockFn;
  private locked = false;
  // Listing cache keyed by canonical address text, valid only while the lock is held (reset on
  // every withLock). `file` is the name on disk, normally the same text.
  private cache: Map<string, Entry> | null = null;
  private taken = new Set<string>();
  // True when the directory changed under this lock, or the holder index was unusable: the index
  // is then rewritten when the locked section completes.
  private indexStale = false;
  private readonly dataDir: string;
  private readonly network: string;

  private readonly lockTimeoutMs: number;
  private readonly indexThreshold: number;
  // True when this locked section's listing came from (or was checked against) the holder index.
  private indexUsed = false;
  // In a section with `siblings`: the other networks of the data dir, whose shared locks stay held
  // until the section ends; each candidate address is looked up in them (one stat each) rather than
  // listing them, since a listing costs about a millisecond per 250 reservations.
  private others: string[] | null = null;

  /**
   * `lockTimeoutMs` bounds the wait for a lock held by another process (then code 11);
   * `indexThreshold` is the number of reservations from which on the holder index is kept.
   */
  constructor(dataDir: string, network: string, flock: FlockFn, lockTimeoutMs = DEFAULT_STALL_TIMEOUT_MS, indexThreshold = INDEX_THRESHOLD) {
    this.lockTimeoutMs = lockTimeoutMs;
    this.indexThreshold = indexThreshold;
    assertPathComponent(network, 'network name');
    this.dataDir = dataDir;
    this.network = network;
    this.dir = join(dataDir, network);
    this.flock = flock;
    this.lockFd = this.openLock();
  }

  // libuv opens every fd with O_CLOEXEC, so a spawned child never inherits the lock. The directory
  // is made only when the lock file cannot be opened for want of it (one open in the steady state).
  private openLock(): number {
    const path = join(this.dir, LOCK_FILE);
    const flags = constants.O_RDONLY | constants.O_CREAT;
    try {
      return openSync(path, flags, 0o750);
    } catch (e) {
      if (!isSysError(e, 'ENOENT')) throw e;
    }
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    return openSync(path, flags, 0o750);
  }

  /**
   * flock(`op`) on `fd`: one non-blocking try, then a blocking wait bounded by lockTimeoutMs, as the
   * reference blocks in flock: the kernel hands the lock over the moment its holder lets go (a poll
   * with sleeps would leave it idle up to a sleep). A holder that never lets go (a stuck or stopped
   * process) is reported as code 11.
   */
  private acquire(fd = this.lockFd, op: 'ex' | 'sh' = 'ex', path = join(this.dir, LOCK_FILE)): void {
    if (this.flock(fd, op, true)) return;
    if (this.flock(fd, op, this.lockTimeoutMs)) return;
    throw tryAgainLater(
      `host-local: lock ${path} is held by another process`,
      `not released within ${this.lockTimeoutMs} ms (${STALL_TIMEOUT_ENV}); nothing was reserved`,
    );
  }

  /**
   * A shared flock on network `name`'s lock file (its writers, ours and the reference's, hold it
   * exclusively while they reserve), pushed onto `fds`. The file is created when missing, as its own
   * writer would create it (a writer that has just made its directory may not have opened it yet:
   * without a file to meet on, both could reserve at once).
   */
  private lockSibling(name: string, fds: number[]): void {
    const path = join(this.dataDir, name, LOCK_FILE);
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_CREAT, 0o750);
    } catch (e) {
      if (isSysError(e, 'ENOENT', 'ENOTDIR', 'EISDIR')) return; // removed meanwhile, or not a network directory
      throw e;
    }
    fds.push(fd);
    this.acquire(fd, 'sh', path);
  }

  /**
   * Takes this network's exclusive lock and, with `siblings`, every other network's shared lock, all
   * in name order: every weft process takes its set in that one order (the reference takes only its
   * own), so two ADDs of two networks never wait on each other in a circle. The networks are listed
   * again once all is held: one made meanwhile (its writer may already be reserving, having not seen
   * ours) means letting go and starting over with it; one made later waits for our lock, since its
   * writer finds our directory.
   */
  private lockAll(siblings: boolean, fds: number[]): void {
    if (!siblings) return this.acquire();
    for (let round = 0; ; round++) {
      const others = this.otherNetworks();
      let own = false;
      for (const name of others) {
        if (!own && name > this.network) {
          this.acquire();
          own = true;
        }
        this.lockSibling(name, fds);
      }
      if (!own) this.acquire();
      const now = this.otherNetworks();
      if (now.every((n) => others.includes(n))) {
        this.others = others;
        return;
      }
      this.flock(this.lockFd, 'un');
      this.unlockSiblings(fds.splice(0));
      if (round >= 10) throw tryAgainLater(`host-local: the networks under ${this.dataDir} keep changing`, 'nothing was reserved');
    }
  }

  private otherNetworks(): string[] {
    return listNetworks(this.dataDir).filter((n) => n !== this.network);
  }

  private unlockSiblings(fds: number[]): void {
    for (const fd of fds) closeSync(fd); // closing the last fd of an open file releases its flock
    this.others = null;
  }

  /** The other network holding the address named `name`, in a section with `siblings`. */
  private holderElsewhere(name: string): string | undefined {
    return this.others?.find((n) => holdsAddress(this.dataDir, n, name));
  }

  withLock<T>(fn: () => T, opts: LockOptions = {}): T {
    if (this.lockFd < 0) throw new Error('DiskStore: closed');
    if (this.locked) throw new Error('DiskStore: lock is not re-entrant');
    const siblingFds: number[] = [];
    try {
      this.lockAll(opts.siblings === true, siblingFds);
    } catch (e) {
      this.flock(this.lockFd, 'un'); // a no-op when the own lock was not reached
      this.unlockSiblings(siblingFds);
      throw e;
    }
    this.locked = true;
    this.cache = null;
    this.taken = new Set();
    this.indexStale = false;
    this.indexUsed = false;
    try {
      const out = fn();
      // Only after success: after a failure the cache may not match the disk, and the changes
      // already made moved the directory's mtime, so the old index no longer validates.
      const cache = this.cache as Map<string, Entry> | null; // set by fn() through listing()
      if (this.indexStale && cache !== null) this.updateIndex(cache);
      return out;
    } finally {
      this.cache = null;
      this.locked = false;
      this.flock(this.lockFd, 'un');
      this.unlockSiblings(siblingFds);
    }
  }

  // A small network keeps no index; one that shrank below the threshold drops its (now stale) one.
  private updateIndex(cache: Map<string, Entry>): void {
    if (cache.size >= this.indexThreshold) {
      saveIndex(this.dataDir, this.network, this.dir, new Map([...cache.values()].map((e) => [e.file, e.content])));
    } else if (this.indexUsed) {
      removeIndex(this.dataDir, this.network);
    }
  }

  private assertLocked(): void {
    if (!this.locked) throw new Error('DiskStore: used outside withLock');
  }

  // Hot path: one readdir, then the holder index or one read per reservation. ADD with 250 addresses
  // held must cost at most 15% more than with none, so nothing here parses addresses (LazyAllocation
  // does, on demand).
  private scan(): Map<string, Entry> {
    const out = new Map<string, Entry>();
    const names: Array<{ name: string; key: string }> = [];
    for (const name of readdirSync(this.dir)) {
      if (name === LOCK_FILE || name.startsWith(LAST_PREFIX)) continue;
      if (name.startsWith(TEMP_PREFIX)) {
        this.unlinkQuietly(name); // left by a writer killed mid-reserve; we hold the lock, so it is dead
        continue;
      }
      const key = reservationKey(name);
      if (key !== null) names.push({ name, key }); // else not an address: a foreign file
    }
    let known: Map<string, string> | null = null;
    if (names.length >= this.indexThreshold) {
      this.indexUsed = true;
      known = loadIndex(this.dataDir, this.network, this.dir);
      if (known === null) this.indexStale = true;
    }
    for (const { name, key } of names) {
      let content = known?.get(name);
      if (content === undefined) {
        try {
          content = readFileSync(`${this.dir}/${name}`, 'utf8');
        } catch (e) {
          if (isSysError(e, 'ENOENT', 'EISDIR')) continue;
          throw e;
        }
      }
      const holder = parseHolder(content);
      if (holder === null) {
        // An empty reservation: a reference binary killed between open(O_EXCL) and write(). Writers
        // hold the lock, so it can never complete; without this the address would be lost for ever.
        this.unlinkQuietly(name);
        continue;
      }
      out.set(key, { alloc: new LazyAllocation(key, holder), file: name, content });
    }
    return out;
  }

  private unlinkQuietly(name: string): void {
    this.indexStale = true;
    try {
      unlinkSync(join(this.dir, name));
    } catch (e) {
      if (!isSysError(e, 'ENOENT')) throw e;
    }
  }

  private listing(): Map<string, Entry> {
    this.assertLocked();
    this.cache ??= this.scan();
    return this.cache;
  }

  /**
   * Writes `content` to a fresh scratch file in the directory and returns its name. open, write and
   * close themselves: the process has used them already, writeFileSync would be compiled for this.
   */
  private writeTemp(content: string): string {
    const name = `${TEMP_PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const fd = openSync(join(this.dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      const bytes = Buffer.from(content);
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (e) {
      this.unlinkQuietly(name);
      throw e;
    } finally {
      closeSync(fd);
    }
    return name;
  }

  reserve(containerId: string, ifname: string, ip: IpAddr, rangeSetIndex: number): boolean {
    const listing = this.listing();
    const name = formatIp(normalizeIp(ip));
    if (listing.has(name) || this.taken.has(name) || this.holderElsewhere(name) !== undefined) return false;
    // Crash safety: the reservation appears with its full content in one step. We write a scratch
    // file, then link(2) it to the address's name; link fails with EEXIST when the name exists, so
    // it is as exclusive as O_EXCL but can never leave an empty or half-written reservation.
    const content = formatHolder(containerId, ifname);
    const tmp = this.writeTemp(content);
    try {
      linkSync(join(this.dir, tmp), join(this.dir, name));
    } catch (e) {
      if (isSysError(e, 'EEXIST')) {
        this.taken.add(name);
        return false;
      }
      throw e;
    } finally {
      this.unlinkQuietly(tmp);
    }
    listing.set(name, { alloc: { ip, containerId: containerId.trim(), ifname }, file: name, content });
    this.indexStale = true;
    this.writeLastReserved(rangeSetIndex, name);
    return true;
  }

  private writeLastReserved(rangeSetIndex: number, text: string): void {
    // temp + rename(2): the file is never seen empty or partial. We unlink the old one first:
    // renaming over an existing file makes ext4 (auto_da_alloc) start writeback, over a millisecond
    // per ADD. A crash in that gap leaves no last_reserved_ip, which costs the round-robin position
    // only (the next ADD starts at the range start), as the reference's own O_TRUNC rewrite can.
    const tmp = this.writeTemp(text);
    const path = join(this.dir, `${LAST_PREFIX}${rangeSetIndex}`);
    try {
      try {
        unlinkSync(path);
      } catch (e) {
        if (!isSysError(e, 'ENOENT')) throw e;
      }
      renameSync(join(this.dir, tmp), path);
    } catch (e) {
      this.unlinkQuietly(tmp);
      throw e;
    }
  }

  /** In a section with `siblings`: the other network holding `ip`, if any (for error messages). */
  heldElsewhere(ip: IpAddr): string | undefined {
    return this.holderElsewhere(formatIp(normalizeIp(ip)));
  }

  lastReservedIp(rangeSetIndex: number): IpAddr | null {
    this.assertLocked();
    let text: string;
    try {
      text = readFileSync(join(this.dir, `${LAST_PREFIX}${rangeSetIndex}`), 'utf8');
    } catch (e) {
      if (isSysError(e, 'ENOENT')) return null;
      throw e;
    }
    const ip = parseIp(text.trim());
    return ip === null ? null : normalizeIp(ip);
  }

  list(): Allocation[] {
    return [...this.listing().values()].map((e) => e.alloc);
  }

  release(ip: IpAddr): boolean {
    const listing = this.listing();
    const key = formatIp(normalizeIp(ip));
    const entry = listing.get(key);
    if (entry === undefined) return false;
    this.unlinkQuietly(entry.file); // by the name found on disk, whatever its spelling
    listing.delete(key);
    return true;
  }

  close(): void {
    if (this.lockFd >= 0) closeSync(this.lockFd);
    this.lockFd = -1;
  }
}
