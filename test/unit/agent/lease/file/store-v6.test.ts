// The file lease store with a dual-stack net-conf: flannel's "&" file names and IPv6 attributes,
// take-back on both families, flanneld-written leases read as peers, watch and lost-lease recovery.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeNetConf } from '../../../../../agent/config/net-conf.ts';
import { FileLeaseStore } from '../../../../../agent/lease/file/store.ts';
import type { AcquireOptions, LeaseEvent, LeaseLostEvent } from '../../../../../agent/lease/store.ts';

const dirs: string[] = [];
const stores: FileLeaseStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const conf = normalizeNetConf({ Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'vxlan' } });
const v4conf = normalizeNetConf({ Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } });
const opts = (n: number, o: Partial<AcquireOptions> = {}): AcquireOptions => ({
  publicIp: `192.168.0.${n}`, publicIpv6: `fd00:1::${n}`, backendType: 'vxlan',
  backendData: { VNI: 1, VtepMAC: `0a:58:00:00:00:0${n}` }, backendV6Data: { VNI: 1, VtepMAC: `0a:58:00:00:01:0${n}` }, ...o,
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'weft-leases6-'));
  dirs.push(d);
  return d;
}
function open(dir: string, c = conf, o: { ttlMs?: number; rescanMs?: number } = {}): FileLeaseStore {
  const s = new FileLeaseStore({ dir, netConf: c, ...o });
  stores.push(s);
  return s;
}
const fileOf = (l: { subnet: string; ipv6Subnet?: string }) => `${l.subnet.replace('/', '-')}${l.ipv6Subnet ? `&${l.ipv6Subnet.replace('/', '-')}` : ''}`;
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

void describe('FileLeaseStore dual stack', () => {
  void it('writes flannel\'s dual-stack file name and JSON, and lists both families', async () => {
    const dir = tempDir();
    const s = open(dir);
    const l = await s.acquire(opts(1));
    assert.match(l.ipv6Subnet ?? '', /^fd00:10:244:[0-9a-f]+::\/64$/);
    assert.equal(l.publicIpv6, 'fd00:1::1');
    const name = fileOf(l);
    assert.match(name, /^10\.244\.\d+\.0-24&fd00:10:244:[0-9a-f]+::-64$/);
    const json = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['PublicIP', 'PublicIPv6', 'BackendType', 'BackendData', 'BackendV6Data', 'Expiration']);
    assert.deepEqual(json['BackendV6Data'], { VNI: 1, VtepMAC: '0a:58:00:00:01:01' });
    const { leases } = await s.list();
    assert.deepEqual(leases.map((x) => [x.subnet, x.ipv6Subnet, x.publicIpv6]), [[l.subnet, l.ipv6Subnet, 'fd00:1::1']]);
  });

  void it('takes back both subnets after a restart; keeps the IPv4 subnet when IPv6 is switched on', async () => {
    const dir = tempDir();
    const a = open(dir, v4conf);
    const v4 = await a.acquire(opts(2));
    assert.equal(v4.ipv6Subnet, undefined);
    assert.ok(existsSync(join(dir, fileOf(v4))));
    await a.close();
    const b = open(dir);
    const dual = await b.acquire(opts(2));
    assert.equal(dual.subnet, v4.subnet);
    assert.ok(dual.ipv6Subnet);
    assert.ok(!existsSync(join(dir, fileOf(v4))), 'the IPv4-only file of this node stays behind');
    assert.ok(existsSync(join(dir, fileOf(dual))));
    await b.close();
    const c = open(dir);
    const again = await c.acquire(opts(2, { backendV6Data: { VNI: 1, VtepMAC: '0a:58:00:00:02:02' } }));
    assert.deepEqual([again.subnet, again.ipv6Subnet], [dual.subnet, dual.ipv6Subnet]);
    assert.equal(JSON.parse(readFileSync(join(dir, fileOf(again)), 'utf8')).BackendV6Data.VtepMAC, '0a:58:00:00:02:02');
    await c.release(again);
    assert.ok(!existsSync(join(dir, fileOf(again))));
    const d = open(dir);
    const pref = await d.acquire(opts(3, { preferredSubnet: '10.244.77.0/24', preferredIpv6Subnet: 'fd00:10:244:77::/64' }));
    assert.deepEqual([pref.subnet, pref.ipv6Subnet], ['10.244.77.0/24', 'fd00:10:244:77::/64']);
  });

  void it('reads a flanneld-written dual-stack lease as a peer and never hands out its subnets', async () => {
    const dir = tempDir();
    const exp = new Date(Date.now() + 3600_000).toISOString();
    writeFileSync(join(dir, '10.244.1.0-24&fd00:10:244:1::-64'),
      `{"PublicIP":"192.168.0.50","PublicIPv6":"fd00:1::50","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:50"},"BackendV6Data":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:51"},"Expiration":"${exp}"}`);
    const s = open(dir);
    const mine = await s.acquire(opts(4, { preferredSubnet: '10.244.1.0/24', preferredIpv6Subnet: 'fd00:10:244:1::/64' }));
    assert.notEqual(mine.subnet, '10.244.1.0/24');
    assert.notEqual(mine.ipv6Subnet, 'fd00:10:244:1::/64');
    const peer = (await s.list()).leases.find((l) => l.publicIp === '192.168.0.50');
    assert.deepEqual(peer && { ...peer, expiration: 0 }, {
      subnet: '10.244.1.0/24', ipv6Subnet: 'fd00:10:244:1::/64', publicIp: '192.168.0.50', publicIpv6: 'fd00:1::50', backendType: 'vxlan',
      backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:50' }, backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:51' }, expiration: 0,
    });
  });

  void it('watch carries the IPv6 fields; a lost own lease comes back with both subnets', async () => {
    const dir = tempDir();
    const s = open(dir, conf, { rescanMs: 50 });
    const other = open(dir);
    const { revision } = await s.list();
    const seen: LeaseEvent[] = [];
    const w = s.watch(revision, (ev) => seen.push(ev));
    const l = await other.acquire(opts(5));
    await until(() => seen.length === 1);
    assert.deepEqual(seen[0], { type: 'added', lease: { ...l, expiration: seen[0]?.lease.expiration } });
    w.stop();
    const mine = await s.acquire(opts(6));
    const lost: LeaseLostEvent[] = [];
    s.onLost((ev) => lost.push(ev));
    unlinkSync(join(dir, fileOf(mine)));
    await until(() => lost.length === 1);
    assert.deepEqual([lost[0]?.current.subnet, lost[0]?.current.ipv6Subnet], [mine.subnet, mine.ipv6Subnet]);
    assert.ok(existsSync(join(dir, fileOf(mine))));
  });

  void it('refuses to lease without the node\'s IPv6 address when IPv6 is enabled', async () => {
    const s = open(tempDir());
    await assert.rejects(s.acquire(opts(7, { publicIpv6: '' })), /EnableIPv6 needs the node's IPv6 address/);
  });
});
