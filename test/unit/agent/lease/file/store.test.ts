// The file lease store on temp directories: flannel's file format, concurrency across processes,
// expiry and reclaim, watch diffs, restart, and recovery of a lost own lease.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { normalizeNetConf } from '../../../../../agent/config/net-conf.ts';
import { FileLeaseStore } from '../../../../../agent/lease/file/store.ts';
import type { LeaseEvent, LeaseLostEvent } from '../../../../../agent/lease/store.ts';

const run = promisify(execFile);
const dirs: string[] = [];
const stores: FileLeaseStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const confRaw = { Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } };
const conf = normalizeNetConf(confRaw);
const data = { VNI: 1, VtepMAC: '0a:58:0a:f4:03:00' };
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'weft-leases-'));
  dirs.push(d);
  return d;
}
function open(dir: string, opts: { ttlMs?: number; rescanMs?: number } = {}, c = conf): FileLeaseStore {
  const s = new FileLeaseStore({ dir, netConf: c, ...opts });
  stores.push(s);
  return s;
}
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

void describe('FileLeaseStore', () => {
  void it('writes one flannel-format file per lease and lists it', async () => {
    const dir = tempDir();
    const s = open(dir);
    const lease = await s.acquire({ publicIp: '192.168.0.1', backendType: 'vxlan', backendData: data });
    const file = join(dir, lease.subnet.replace('/', '-'));
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['PublicIP', 'BackendType', 'BackendData', 'Expiration']);
    assert.deepEqual(json['BackendData'], { VNI: 1, VtepMAC: '0a:58:0a:f4:03:00' });
    assert.ok(Math.abs(Date.parse(json['Expiration'] as string) - Date.now() - 24 * 3600_000) < 60_000);
    const { leases } = await s.list();
    assert.deepEqual(leases.map((l) => l.subnet), [lease.subnet]);
  });

  void it('never gives two processes the same subnet', async () => {
    const dir = tempDir();
    const small = { Network: '10.9.0.0/22', SubnetLen: 26 }; // 15 subnets for 12 nodes: collisions likely
    const child = join(import.meta.dirname, 'helpers', 'acquire-child.ts');
    const outs = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      run(process.execPath, ['--import', 'tsx', child, dir, `192.168.7.${i + 1}`, JSON.stringify(small)])));
    const leases = outs.map((o) => JSON.parse(o.stdout) as { subnet?: string; error?: string });
    assert.deepEqual(leases.filter((l) => l.error), []);
    const subnets = leases.map((l) => l.subnet);
    assert.equal(new Set(subnets).size, 12, `duplicates in ${subnets.join(' ')}`);
    const s = open(dir, {}, normalizeNetConf(small));
    assert.equal((await s.list()).leases.length, 12);
    await s.acquire({ publicIp: '192.168.7.100', backendType: 'vxlan', backendData: data });
    await s.acquire({ publicIp: '192.168.7.101', backendType: 'vxlan', backendData: data });
    await s.acquire({ publicIp: '192.168.7.102', backendType: 'vxlan', backendData: data });
    await assert.rejects(s.acquire({ publicIp: '192.168.7.103', backendType: 'vxlan', backendData: data }), /no free \/26 subnet left/);
  });

  void it('takes back the same subnet after a restart, or the preferred one', async () => {
    const dir = tempDir();
    const a = open(dir);
    const first = await a.acquire({ publicIp: '192.168.0.1', backendType: 'vxlan', backendData: data });
    await a.close();
    const b = open(dir);
    const again = await b.acquire({ publicIp: '192.168.0.1', backendType: 'vxlan', backendData: { ...data, VtepMAC: '0a:00:00:00:00:02' } });
    assert.equal(again.subnet, first.subnet);
    assert.equal(JSON.parse(readFileSync(join(dir, first.subnet.replace('/', '-')), 'utf8')).BackendData.VtepMAC, '0a:00:00:00:00:02');
    await b.release(again);
    assert.ok(!existsSync(join(dir, first.subnet.replace('/', '-'))));
    const c = open(dir);
    const pref = await c.acquire({ publicIp: '192.168.0.9', backendType: 'vxlan', backendData: data, preferredSubnet: '10.244.77.0/24' });
    assert.equal(pref.subnet, '10.244.77.0/24');
  });

  void it('ignores expired leases, reclaims them, and renews its own before expiry', async () => {
    const dir = tempDir();
    const old = open(dir, { ttlMs: 400 });
    const mine = await old.acquire({ publicIp: '192.168.0.1', backendType: 'vxlan', backendData: data, preferredSubnet: '10.244.5.0/24' });
    await old.close(); // no more renewals: it will expire
    const s = open(dir, { ttlMs: 600, rescanMs: 50 });
    const kept = await s.acquire({ publicIp: '192.168.0.2', backendType: 'vxlan', backendData: data });
    await new Promise((r) => setTimeout(r, 800));
    const { leases } = await s.list();
    assert.deepEqual(leases.map((l) => l.publicIp), ['192.168.0.2'], 'expired lease listed, or own lease not renewed');
    assert.ok((leases[0]?.expiration ?? 0) > kept.expiration, 'own lease was not renewed');
    const taker = await s.acquire({ publicIp: '192.168.0.3', backendType: 'vxlan', backendData: data, preferredSubnet: mine.subnet });
    assert.equal(taker.subnet, mine.subnet);
    assert.equal(JSON.parse(readFileSync(join(dir, mine.subnet.replace('/', '-')), 'utf8')).PublicIP, '192.168.0.3');
  });

  void it('watch delivers added and removed diffs from other writers', async () => {
    const dir = tempDir();
    const s = open(dir, { rescanMs: 600_000 }); // no rescan within the test: only fs.watch can deliver
    const other = open(dir);
    const { revision } = await s.list();
    const seen: LeaseEvent[] = [];
    const w = s.watch(revision, (ev) => seen.push(ev));
    const l = await other.acquire({ publicIp: '192.168.0.5', backendType: 'vxlan', backendData: data });
    await until(() => seen.length === 1, 20_000);
    assert.deepEqual(seen[0], { type: 'added', lease: { ...l, expiration: seen[0]?.lease.expiration } });
    unlinkSync(join(dir, l.subnet.replace('/', '-'))); // a lease deleted by hand
    await until(() => seen.length === 2, 20_000);
    assert.equal(seen[1]?.type, 'removed');
    writeFileSync(join(dir, '10.244.200.0-24'), 'not json'); // garbage is ignored, not fatal
    w.stop();
  });

  void it('re-registers its own lease when the file is deleted, and reports it', async () => {
    const dir = tempDir();
    const s = open(dir, { rescanMs: 50 });
    const l = await s.acquire({ publicIp: '192.168.0.8', backendType: 'vxlan', backendData: data });
    const lost: LeaseLostEvent[] = [];
    s.onLost((ev) => lost.push(ev));
    unlinkSync(join(dir, l.subnet.replace('/', '-')));
    await until(() => lost.length === 1);
    assert.equal(lost[0]?.lost.subnet, l.subnet);
    assert.equal(lost[0]?.current.subnet, l.subnet, 'the same subnet is free again, so it is taken back');
    assert.ok(existsSync(join(dir, l.subnet.replace('/', '-'))));
  });
});
