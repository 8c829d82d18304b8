// The file store's fs.watch path: a changed lease file is read alone (LeaseDirReader.readNames), a
// vanished one takes a full scan; both seen with the safety-net scan pushed out of the way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { FileLeaseStore } from '../../../../../agent/lease/file/store.ts';
import { LeaseDirReader, leasePath } from '../../../../../agent/lease/file/lease-io.ts';
import type { LeaseEvent } from '../../../../../agent/lease/store.ts';
import { conf, fixtures, peer, writeLease } from './helpers/lease-dir.ts';

const { tempDir, keep } = fixtures('weft-leases-watch-');
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

void describe('LeaseDirReader.readNames', () => {
  void it('reads only the named lease files, null for a vanished one, skips temp and foreign names', () => {
    const dir = tempDir();
    writeLease(dir, peer(3));
    writeLease(dir, peer(4));
    const r = new LeaseDirReader(dir);
    const got = r.readNames(['10.244.3.0-24', '10.244.9.0-24', '.t-x', 'README']);
    assert.deepEqual([...got.keys()], ['10.244.3.0/24', '10.244.9.0/24']);
    assert.equal(got.get('10.244.3.0/24')?.publicIp, '192.0.2.3');
    assert.equal(got.get('10.244.9.0/24'), null);
  });
});

void describe('FileLeaseStore watch path', () => {
  void it('sees a joining and a leaving peer from fs.watch alone (safety-net scan an hour away)', async () => {
    const dir = tempDir();
    const s = new FileLeaseStore({ dir, netConf: conf, rescanMs: 3_600_000 });
    keep(s);
    const own = await s.acquire({ publicIp: '192.0.2.200', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0a:58:0a:f4:c8:00' } });
    const { revision } = await s.list();
    const events: LeaseEvent[] = [];
    s.watch(revision, (e) => events.push(e));
    const p = peer(own.subnet === '10.244.5.0/24' ? 6 : 5);
    writeLease(dir, p);
    await until(() => events.some((e) => e.type === 'added' && e.lease.subnet === p.subnet));
    unlinkSync(leasePath(dir, p.subnet));
    await until(() => events.some((e) => e.type === 'removed' && e.lease.subnet === p.subnet));
    assert.deepEqual(events.map((e) => `${e.type} ${e.lease.subnet}`), [`added ${p.subnet}`, `removed ${p.subnet}`]);
  });
});
