// The file store's periodic full scan, cut into slices (runs in weftd's namespace, on its event loop):
// the directory listed off the event loop, then a stat (and, when changed, a read) of a few hundred
// lease files at a time, yielding between slices, so that a 5,000-file directory never holds a
// join's pass for the whole scan.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LeaseDirReader } from './lease-io.ts';
import { type Lease, leaseKey } from '../store.ts';

/** Lease files stat'ed (and read when changed) per slice: ~2-5 ms, against 55-150 ms for 5,000 files at once (load 6.5). */
export const SCAN_SLICE_FILES = 250;

/** What a sliced scan needs from its store besides the reader. */
export interface SlicedScanOptions {
  sliceFiles?: number;
  /** Names fs.watch reported while the scan ran; they are read again at its end. */
  touched: ReadonlySet<string>;
  /** True once the scan is superseded (a synchronous full scan ran, or the store closed). */
  cancelled: () => boolean;
  /** Awaited between slices; the event loop's next turn unless a test says otherwise. */
  between?: () => Promise<unknown>;
}

/**
 * Every lease on disk (expired ones included), keyed by leaseKey, read slice by slice; null when
 * cancelled. A file that changes during the scan is never kept stale or lost: the directory is
 * listed again at the end, so a file created after the first listing is read, one deleted after its
 * slice is dropped, and one fs.watch named during the scan (replaced after its slice) is read again.
 */
export async function scanSliced(reader: LeaseDirReader, opts: SlicedScanOptions): Promise<Map<string, Lease> | null> {
  const size = opts.sliceFiles ?? SCAN_SLICE_FILES;
  const between = opts.between ?? (() => nextTurn());
  const first = await reader.listNames();
  if (opts.cancelled()) return null;
  const byName = new Map<string, Lease>();
  for (let i = 0; i < first.length; i += size) {
    if (i > 0) {
      await between();
      if (opts.cancelled()) return null;
    }
    for (const name of first.slice(i, i + size)) {
      const lease = reader.readName(name);
      if (lease) byName.set(name, lease);
    }
  }
  const listed = new Set(first);
  const now = new Set(await reader.listNames());
  if (opts.cancelled()) return null;
  for (const name of byName.keys()) if (!now.has(name)) byName.delete(name);
  for (const name of now) {
    if (listed.has(name) && !opts.touched.has(name)) continue;
    const lease = reader.readName(name);
    if (lease) byName.set(name, lease);
    else byName.delete(name);
  }
  reader.forgetExcept(now);
  const out = new Map<string, Lease>();
  for (const lease of byName.values()) out.set(leaseKey(lease), lease);
  return out;
}
