// The file store's sliced full scan (no root): at most sliceFiles files per turn of the event loop,
// and a directory changing between slices is neither lost nor reported stale; the periodic safety
// net (DirScanner) yields while it scans and drops a sliced scan overtaken by a synchronous one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LeaseDirReader, leasePath } from '../../../../../agent/lease/file/lease-io.ts';
import { scanSliced } from '../../../../../agent/lease/file/sliced-scan.ts';
import { DirScanner } from '../../../../../agent/lease/file/dir-scanner.ts';
import type { Lease } from '../../../../../agent/lease/store.ts';
import { fixtures, peer, writeLease } from './helpers/lease-dir.ts';

const { tempDir } = fixtures('weft-leases-slice-');

/** A directory of n peer leases; past 255 they spill out of 10.244.0.0/16 (the reader checks no net-conf). */
function dirOf(n: number): string {
  const dir = tempDir();
  for (let i = 1; i <= n; i++) writeLease(dir, i < 256 ? peer(i) : { ...peer(1), subnet: `10.${100 + (i >> 8)}.${i & 255}.0/24` });
  return dir;
}

void describe('scanSliced', () => {
  void it('reads at most sliceFiles files between two turns and finds every lease', async () => {
    const dir = dirOf(7);
    const reader = new LeaseDirReader(dir);
    const readName = reader.readName.bind(reader);
    let sinceTurn = 0;
    let most = 0;
    let turns = 0;
    reader.readName = (name) => { most = Math.max(most, ++sinceTurn); return readName(name); };
    const all = await scanSliced(reader, { sliceFiles: 3, touched: new Set(), cancelled: () => false, between: () => { turns++; sinceTurn = 0; return nextTurn(); } });
    assert.equal(most, 3);
    assert.equal(turns, 2); // after slices 1 and 2
    assert.deepEqual([...(all ?? new Map<string, Lease>()).keys()].sort(), [1, 2, 3, 4, 5, 6, 7].map((i) => `10.244.${i}.0/24`).sort());
  });

  void it('sees a file created between slices and drops files deleted before or after their slice', async () => {
    const dir = dirOf(6);
    const reader = new LeaseDirReader(dir);
    const order = reader.names();
    const subnetOf = (name: string) => name.replace('-', '/');
    let turn = 0;
    const between = () => {
      if (++turn === 1) {
        writeLease(dir, peer(40)); // a new name, not in the first listing
        unlinkSync(leasePath(dir, subnetOf(order[0] as string))); // already read
        unlinkSync(leasePath(dir, subnetOf(order[4] as string))); // not read yet
      }
      return nextTurn();
    };
    const all = await scanSliced(reader, { sliceFiles: 2, touched: new Set(), cancelled: () => false, between });
    const got = [...(all ?? new Map<string, Lease>()).keys()].sort();
    const want = [...order.slice(1, 4), order[5] as string].map(subnetOf).concat('10.244.40.0/24').sort();
    assert.deepEqual(got, want);
  });

  void it('reads again a file fs.watch named during the scan, and returns null once cancelled', async () => {
    const dir = dirOf(4);
    const reader = new LeaseDirReader(dir);
    const first = reader.names()[0] as string;
    const touched = new Set<string>();
    const between = () => {
      if (touched.size === 0) {
        writeLease(dir, { ...peer(Number(first.split('.')[2])), publicIp: '198.51.100.9' }); // replaced after its slice
        touched.add(first);
      }
      return nextTurn();
    };
    const all = await scanSliced(reader, { sliceFiles: 2, touched, cancelled: () => false, between });
    assert.equal(all?.get(first.replace('-', '/'))?.publicIp, '198.51.100.9');
    let n = 0;
    assert.equal(await scanSliced(reader, { sliceFiles: 2, touched, cancelled: () => ++n > 1 }), null);
  });
});

void describe('DirScanner periodic scan', () => {
  void it('lets the event loop turn while it scans 1,000 files, and yields to a synchronous scan', { timeout: 20_000 }, async () => {
    const dir = dirOf(250 * 4);
    const reader = new LeaseDirReader(dir);
    const scans: number[] = [];
    const scanner = new DirScanner(reader, { rescanMs: 20, onScan: (live) => scans.push(live.length), onError: (err) => { throw err; } });
    // Count turns of the event loop from the sliced scan's first listing to its result.
    const listNames = reader.listNames.bind(reader);
    let listings = 0;
    reader.listNames = () => { listings++; return listNames(); };
    scanner.start();
    while (listings === 0) await new Promise((r) => setTimeout(r, 5));
    let turns = 0;
    while (scans.length === 0) { turns++; await nextTurn(); }
    assert.equal(scans[0], 1000);
    // Polling may first see the listing after the first slice; a scan in one piece would show 0 turns.
    assert.ok(turns >= 3, `${turns} turns of the event loop during a 4-slice scan`);
    // The next period's sliced scan, overtaken after its first slice, reports nothing itself.
    const before = listings;
    while (listings === before) await new Promise((r) => setTimeout(r, 5));
    scanner.scanNow();
    for (let i = 0; i < 20; i++) await nextTurn();
    scanner.stop();
    assert.deepEqual(scans, [1000, 1000]);
  });
});
