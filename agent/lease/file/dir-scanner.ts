// When and how the file store scans its whole lease directory (runs in weftd's namespace, on its
// event loop): synchronous full scans for callers that need the directory as it is now (acquire,
// list, a vanished file), and the periodic safety net behind fs.watch, which stats only the
// directory while it is unchanged and otherwise scans in slices (sliced-scan.ts).
import type { LeaseDirReader } from './lease-io.ts';
import { scanSliced } from './sliced-scan.ts';
import type { Lease } from '../store.ts';

/**
 * The safety-net scan stats every file, so its period grows with the directory (this many ms per
 * lease file, at least rescanMs): a 5,000-node directory is scanned every 5 s, not every second.
 * Changes fs.watch reports are read file by file as they come, so joins never wait for a scan.
 */
const SCAN_MS_PER_FILE = 1;

/**
 * A periodic scan whose directory is unchanged since the last full scan (LeaseDirReader.dirStamp)
 * reads nothing, except every this many periods, which stat every file anyway (for a lease file
 * edited in place by hand).
 */
const FULL_SCAN_EVERY = 12;

/** What the scanner reports to its store. */
export interface DirScannerOptions {
  /** The shortest safety-net period, ms. */
  rescanMs: number;
  /** Every full scan's unexpired leases, in the order found. */
  onScan: (live: Lease[]) => void;
  onError: (err: Error) => void;
}

/** The file store's full scans of one directory (see the module comment). */
export class DirScanner {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastScanCount = 0;
  /** The directory's stamp taken before the last full scan, the periodic scans skipped since, and the earliest expiration it saw. */
  private scanStamp: string | undefined;
  private skippedScans = 0;
  private nextExpiry = Infinity;
  /** Bumped by every full scan, so that a sliced scan overtaken by a synchronous one is dropped. */
  private scanGen = 0;
  /** Names fs.watch reported while a sliced scan runs (undefined while none runs). */
  private touched: Set<string> | undefined;

  constructor(private readonly reader: LeaseDirReader, private readonly opts: DirScannerOptions) {}

  /** Starts the periodic safety net; true the first time only. */
  start(): boolean {
    if (this.stopped || this.timer) return false;
    this.schedule();
    return true;
  }

  /** Stops the safety net; a sliced scan under way is dropped at its next slice. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** A file name fs.watch reported: a sliced scan under way reads it again at its end. */
  noteWatched(name: string): void {
    this.touched?.add(name);
  }

  /** A full scan now, on the caller's turn of the event loop. */
  scanNow(): void {
    if (this.stopped) return;
    this.scanGen++;
    let all: Map<string, Lease>;
    let stamp: string | undefined;
    try {
      // Taken before the read: a change during it moves the directory's times past this stamp.
      stamp = this.reader.dirStamp();
      all = this.reader.readAll();
    } catch (err) {
      this.scanStamp = undefined;
      this.opts.onError(err as Error);
      return;
    }
    this.record(stamp, all);
  }

  private schedule(): void {
    const ms = Math.max(this.opts.rescanMs, this.lastScanCount * SCAN_MS_PER_FILE);
    this.timer = setTimeout(() => {
      void this.periodic().finally(() => { if (!this.stopped) this.schedule(); });
    }, ms).unref();
  }

  /** The safety net: a full scan unless the directory is unchanged and no lease expired since the last one. */
  private async periodic(): Promise<void> {
    let unchanged = false;
    try {
      unchanged = this.skippedScans < FULL_SCAN_EVERY - 1 && Date.now() < this.nextExpiry
        && this.scanStamp !== undefined && this.reader.dirStamp() === this.scanStamp;
    } catch (err) {
      this.opts.onError(err as Error);
    }
    if (unchanged) {
      this.skippedScans++;
      return;
    }
    await this.scanInSlices();
  }

  /** A full scan that yields to the event loop between slices of SCAN_SLICE_FILES files. */
  private async scanInSlices(): Promise<void> {
    const gen = ++this.scanGen;
    const touched = new Set<string>();
    this.touched = touched;
    try {
      const stamp = this.reader.dirStamp(); // before the first listing, as in scanNow
      const all = await scanSliced(this.reader, { touched, cancelled: () => this.stopped || gen !== this.scanGen });
      if (all !== null) this.record(stamp, all);
    } catch (err) {
      this.scanStamp = undefined;
      this.opts.onError(err as Error);
    } finally {
      if (this.touched === touched) this.touched = undefined;
    }
  }

  private record(stamp: string | undefined, all: Map<string, Lease>): void {
    this.scanStamp = stamp;
    const now = Date.now();
    this.lastScanCount = all.size;
    this.skippedScans = 0;
    const live = [...all.values()].filter((l) => l.expiration > now);
    this.nextExpiry = live.reduce((m, l) => Math.min(m, l.expiration), Infinity);
    this.opts.onScan(live);
  }
}
