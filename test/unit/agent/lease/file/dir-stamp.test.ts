// The file store's cheap safety net: LeaseDirReader.dirStamp moves with every rename into the
// directory and is withheld while the directory's times are fresh; the periodic scan then reads no
// lease file while the directory is unchanged, except every 12th period.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FileLeaseStore } from '../../../../../agent/lease/file/store.ts';
import { DIR_STAMP_SETTLE_MS, LeaseDirReader } from '../../../../../agent/lease/file/lease-io.ts';
import { conf, fixtures, peer, writeLease } from './helpers/lease-dir.ts';

const { tempDir, keep } = fixtures('weft-leases-stamp-');
const later = () => Date.now() + DIR_STAMP_SETTLE_MS + 1000;

void describe('LeaseDirReader.dirStamp', () => {
  void it('is withheld while the directory just changed, stable while unchanged, and moves with a rename in', () => {
    const dir = tempDir();
    writeLease(dir, peer(3));
    const r = new LeaseDirReader(dir);
    assert.equal(r.dirStamp(), undefined);
    const a = r.dirStamp(later());
    assert.notEqual(a, undefined);
    assert.equal(r.dirStamp(later()), a);
    writeLease(dir, peer(3)); // a renewal: same name, renamed over
    const b = r.dirStamp(later());
    assert.notEqual(b, a);
    writeLease(dir, peer(4));
    assert.notEqual(r.dirStamp(later()), b);
  });
});

void describe('FileLeaseStore periodic scan', () => {
  void it('reads no lease file while the directory is unchanged, except every 12th period', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    for (let i = 1; i <= 20; i++) writeLease(dir, peer(i));
    const s = new FileLeaseStore({ dir, netConf: conf, rescanMs: 40 });
    keep(s);
    // A full scan is a synchronous readAll or the first listing of a sliced scan.
    const reader = (s as unknown as { reader: LeaseDirReader }).reader;
    const readAll = reader.readAll.bind(reader);
    const scanner = (s as unknown as { scanner: { scanInSlices: () => Promise<void> } }).scanner;
    const scanInSlices = scanner.scanInSlices.bind(scanner);
    let full = 0;
    reader.readAll = () => { full++; return readAll(); };
    scanner.scanInSlices = () => { full++; return scanInSlices(); };
    await s.list();
    // Let the directory's times settle, so that a full scan records a stamp.
    await new Promise((r) => setTimeout(r, DIR_STAMP_SETTLE_MS + 300));
    full = 0;
    await new Promise((r) => setTimeout(r, 40 * 30));
    // About 30 periods: without the stamp each is a full scan; with it, 1 in 12 (timers may stretch).
    assert.ok(full >= 1 && full <= 5, `${full} full scans in ~30 periods`);
    // A lease renamed in changes the directory: the next period scans every file again.
    const before = full;
    writeLease(dir, peer(30));
    await new Promise((r) => setTimeout(r, 40 * 4));
    assert.ok(full > before, 'a changed directory is scanned in full');
    assert.ok((await s.list()).leases.some((l) => l.subnet === '10.244.30.0/24'));
  });
});
