// The etcd lease store against a real etcd. Run as root: the file re-executes itself under
// `ip netns exec` in a namespace it creates, starts etcd on 127.0.0.1 of that namespace's own lo,
// and always kills etcd and deletes the namespace at the end. Nothing touches the root namespace.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { normalizeNetConf } from '../../../agent/config/net-conf.ts';
import { type EtcdLeaseStore, openEtcdLeaseStore } from '../../../agent/lease/etcd/store.ts';
import type { Lease, LeaseEvent, LeaseLostEvent } from '../../../agent/lease/store.ts';
import { createTestNetnsSync, inNetns } from '../../../testkit/netns.ts';

const INNER = process.env['WEFT_ETCD_NS'];
const thisFile = fileURLToPath(import.meta.url);

function hasEtcd(): boolean {
  try { execFileSync('etcd', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
}

if (INNER === undefined) {
  const skip = process.getuid?.() !== 0 ? 'needs root' : !hasEtcd() ? 'etcd not installed' : false;
  void test('etcd lease store, in a network namespace of its own', { skip, timeout: 300_000 }, async () => {
    const kit = createTestNetnsSync();
    const ns = kit.name;
    try {
      execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
      // Run the file directly (not under --test): node:test refuses nested test runners.
      const env: NodeJS.ProcessEnv = { ...process.env, WEFT_ETCD_NS: ns, WEFT_ETCD_PARENT_NETNS: readlinkSync('/proc/self/ns/net') };
      delete env['NODE_TEST_CONTEXT'];
      const [file = 'ip', ...args] = inNetns(ns, [process.execPath, '--import', 'tsx', '--test-reporter=tap', thisFile]);
      const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString(); process.stderr.write(d); });
      child.stderr.on('data', (d: Buffer) => { out += d.toString(); process.stderr.write(d); });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      assert.equal(code, 0, `inner etcd tests failed:\n${out.slice(-4000)}`);
      assert.match(out, /# pass [1-9]/);
      assert.match(out, /# fail 0/);
    } finally {
      // Whatever the inner run left (etcd on a crash) dies with the namespace.
      kit.destroySync();
    }
  });
} else {
  innerTests();
}

function innerTests(): void {
  // Refuse to run in the caller's namespace: etcd would listen on the machine's loopback.
  if (readlinkSync('/proc/self/ns/net') === (process.env['WEFT_ETCD_PARENT_NETNS'] ?? '')) throw new Error('inner etcd tests must run inside the test namespace');
  const url = 'http://127.0.0.1:2379';
  const dataDir = mkdtempSync(join(tmpdir(), 'weft-etcd-'));
  let etcd: ChildProcess | undefined;
  let admin: Etcd3;
  const stores: EtcdLeaseStore[] = [];
  const vxlanConf = { Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } };
  const data = { VNI: 1, VtepMAC: '0a:58:0a:f4:03:00' };

  async function startEtcd(): Promise<void> {
    etcd = spawn('etcd', ['--name', 't', '--data-dir', join(dataDir, 'd'), '--listen-client-urls', url, '--advertise-client-urls', url,
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://127.0.0.1:2380',
      '--initial-cluster', 't=http://127.0.0.1:2380', '--log-level', 'error'], { stdio: 'ignore' });
    await waitHealthy(url);
  }
  async function waitHealthy(at: string): Promise<void> {
    const end = Date.now() + 20_000;
    for (;;) {
      try {
        const r = await fetch(`${at}/health`);
        if (r.ok && ((await r.json()) as { health?: string }).health === 'true') return;
      } catch { /* not up yet */ }
      if (Date.now() > end) throw new Error('etcd did not become healthy');
      await sleep(100);
    }
  }
  async function stopEtcd(): Promise<void> {
    const p = etcd;
    etcd = undefined;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.on('exit', r));
    p.kill('SIGTERM');
    await gone;
  }
  async function open(prefix: string, extra: { ttlSeconds?: number; resyncMs?: number; netConf?: boolean; onError?: (e: Error) => void } = {}): Promise<EtcdLeaseStore> {
    const s = await openEtcdLeaseStore({
      endpoints: [url], prefix, ...(extra.netConf === false ? {} : { netConf: normalizeNetConf(vxlanConf) }),
      ...(extra.ttlSeconds ? { ttlSeconds: extra.ttlSeconds } : {}), ...(extra.resyncMs ? { resyncMs: extra.resyncMs } : {}),
      ...(extra.onError ? { onError: extra.onError } : {}),
    });
    stores.push(s);
    return s;
  }
  const key = (prefix: string, l: Lease) => `${prefix}/subnets/${l.subnet.replace('/', '-')}`;

  before(async () => {
    process.on('exit', () => etcd?.kill('SIGKILL'));
    await startEtcd();
    admin = new Etcd3({ hosts: [url] });
  });
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    admin?.close();
    await stopEtcd();
    rmSync(dataDir, { recursive: true, force: true });
  });

  void describe('EtcdLeaseStore with etcd auth', () => {
    const authUrl = 'http://127.0.0.1:2479';
    let authEtcd: ChildProcess | undefined;
    const authArgs = ['--name', 'a', '--data-dir', join(dataDir, 'auth'), '--listen-client-urls', authUrl, '--advertise-client-urls', authUrl,
      '--listen-peer-urls', 'http://127.0.0.1:2480', '--initial-advertise-peer-urls', 'http://127.0.0.1:2480',
      '--initial-cluster', 'a=http://127.0.0.1:2480', '--auth-token', 'simple', '--auth-token-ttl', '2', '--log-level', 'error'];
    before(async () => {
      authEtcd = spawn('etcd', authArgs, { stdio: 'ignore' });
      process.on('exit', () => authEtcd?.kill('SIGKILL'));
      await waitHealthy(authUrl);
      const ctl = (...args: string[]): void => void execFileSync('etcdctl', ['--endpoints', authUrl, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, stdio: 'ignore' });
      ctl('put', '/auth/config', JSON.stringify(vxlanConf));
      ctl('user', 'add', 'root:s3cret');
      ctl('auth', 'enable');
    });
    after(() => { authEtcd?.kill('SIGKILL'); });

    void it('renews an auth token that etcd let expire (--auth-token-ttl) and carries on: keep-alive, list, watch', async () => {
      const errors: Error[] = [];
      const s = await openEtcdLeaseStore({ endpoints: [authUrl], prefix: '/auth', security: { username: 'root', password: 's3cret' }, onError: (e) => errors.push(e) });
      stores.push(s);
      const mine = await s.acquire({ publicIp: '192.168.96.1', backendType: 'vxlan', backendData: data });
      const seen: LeaseEvent[] = [];
      s.watch((await s.list()).revision, (ev) => seen.push(ev));
      // A token of ours, idle as long as the store's: etcd forgets it after 2 s without use.
      const auth = await fetch(`${authUrl}/v3/auth/authenticate`, { method: 'POST', body: JSON.stringify({ name: 'root', password: 's3cret' }) });
      const token = ((await auth.json()) as { token: string }).token;
      await sleep(4000);
      const stale = await fetch(`${authUrl}/v3/kv/range`, { method: 'POST', headers: { authorization: token }, body: JSON.stringify({ key: Buffer.from('/auth/config').toString('base64') }) });
      assert.match(await stale.text(), /invalid auth token/, 'the token did not expire: the test proves nothing');
      const renewed = await s.renew(mine);
      assert.equal(renewed.subnet, mine.subnet);
      assert.ok(renewed.expiration > Date.now() + 86000_000);
      const other = await openEtcdLeaseStore({ endpoints: [authUrl], prefix: '/auth', security: { username: 'root', password: 's3cret' } });
      stores.push(other);
      const lo = await other.acquire({ publicIp: '192.168.96.2', backendType: 'vxlan', backendData: data });
      await until(() => seen.some((e) => e.type === 'added' && e.lease.subnet === lo.subnet));
      assert.deepEqual((await s.list()).leases.map((l) => l.publicIp).sort(), ['192.168.96.1', '192.168.96.2']);
      assert.deepEqual(errors.map((e) => e.message), [], 'the renewal was not silent');
    });

    void it('with auth, resumes its watch after an etcd restart (etcd forgets every token)', async () => {
      const errors: Error[] = [];
      const s = await openEtcdLeaseStore({ endpoints: [authUrl], prefix: '/auth2', netConf: normalizeNetConf(vxlanConf), security: { username: 'root', password: 's3cret' }, resyncMs: 1000, onError: (e) => errors.push(e) });
      stores.push(s);
      const mine = await s.acquire({ publicIp: '192.168.97.1', backendType: 'vxlan', backendData: data });
      const seen: LeaseEvent[] = [];
      s.watch((await s.list()).revision, (ev) => seen.push(ev));
      const p = authEtcd;
      const gone = new Promise((r) => p?.on('exit', r));
      p?.kill('SIGTERM');
      await gone;
      authEtcd = spawn('etcd', authArgs, { stdio: 'ignore' });
      await waitHealthy(authUrl);
      const other = await openEtcdLeaseStore({ endpoints: [authUrl], prefix: '/auth2', netConf: normalizeNetConf(vxlanConf), security: { username: 'root', password: 's3cret' } });
      stores.push(other);
      const lo = await other.acquire({ publicIp: '192.168.97.2', backendType: 'vxlan', backendData: data });
      await until(() => seen.some((e) => e.type === 'added' && e.lease.subnet === lo.subnet), 10_000);
      assert.equal((await s.renew(mine)).subnet, mine.subnet);
      assert.ok(errors.some((e) => /etcd watch of \/auth2\/subnets\/:/.test(e.message)), `the break was not reported: ${errors.map((e) => e.message).join('; ')}`);
    });
  });

  void describe('EtcdLeaseStore', () => {
    void it('reads <prefix>/config, writes flannel\'s lease JSON under a 24 h etcd lease, and takes it back after a restart', async () => {
      const prefix = '/coreos.com/network';
      await admin.put(`${prefix}/config`).value(JSON.stringify(vxlanConf));
      const s = await open(prefix, { netConf: false });
      assert.equal(s.netConf.network, '10.244.0.0/16');
      const l = await s.acquire({ publicIp: '192.168.50.1', backendType: 'vxlan', backendData: data });
      assert.equal(await admin.get(key(prefix, l)).string(), '{"PublicIP":"192.168.50.1","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:00"}}');
      const kv = (await admin.get(key(prefix, l)).exec()).kvs[0];
      assert.ok(kv && kv.lease !== '0', 'key not bound to an etcd lease');
      const ttl = await admin.leaseClient.leaseTimeToLive({ ID: kv.lease });
      assert.equal(ttl.grantedTTL, '86400');
      assert.ok(Number(ttl.TTL) > 86000);
      await s.close();
      const again = await open(prefix, { netConf: false });
      const l2 = await again.acquire({ publicIp: '192.168.50.1', backendType: 'vxlan', backendData: data });
      assert.equal(l2.subnet, l.subnet);
      const old = await admin.leaseClient.leaseTimeToLive({ ID: kv.lease });
      assert.equal(old.TTL, '-1', 'the previous etcd lease should have been revoked');
      assert.ok(await admin.get(key(prefix, l)).exists());
    });

    void it('goes past an endpoint that does not answer to the next of --etcd-endpoints (calls and the watch)', async () => {
      const s = await openEtcdLeaseStore({ endpoints: ['http://127.0.0.1:2391', url], prefix: '/failover', netConf: normalizeNetConf(vxlanConf) });
      stores.push(s);
      const l = await s.acquire({ publicIp: '192.168.51.1', backendType: 'vxlan', backendData: data });
      assert.equal(JSON.parse((await admin.get(key('/failover', l)).string()) ?? '{}').PublicIP, '192.168.51.1');
      const seen: LeaseEvent[] = [];
      s.watch((await s.list()).revision, (ev) => seen.push(ev));
      await admin.put('/failover/subnets/10.244.99.0-24').value('{"PublicIP":"192.168.51.2","BackendType":"vxlan"}');
      await until(() => seen.some((e) => e.type === 'added' && e.lease.publicIp === '192.168.51.2'));
    });

    void it('creates keys only if absent: concurrent nodes never share a subnet', async () => {
      const prefix = '/contention';
      const small = normalizeNetConf({ Network: '10.9.0.0/22', SubnetLen: 26 });
      await admin.put(`${prefix}/subnets/10.9.0.64-26`).value('{"PublicIP":"192.168.9.99","BackendType":"vxlan"}');
      const nodes = await Promise.all(Array.from({ length: 12 }, () => openEtcdLeaseStore({ endpoints: [url], prefix, netConf: small })));
      stores.push(...nodes);
      const leases = await Promise.all(nodes.map((n, i) => n.acquire({ publicIp: `192.168.9.${i + 1}`, backendType: 'vxlan', backendData: data, preferredSubnet: '10.9.0.64/26' })));
      const subnets = leases.map((l) => l.subnet);
      assert.equal(new Set(subnets).size, 12, subnets.join(' '));
      assert.ok(!subnets.includes('10.9.0.64/26'), 'a key held by another node was taken');
      const { leases: listed } = await nodes[0]!.list();
      assert.equal(listed.length, 13);
      await assert.rejects(nodes[1]!.acquire({ publicIp: '192.168.9.200', backendType: 'vxlan', backendData: data }).then(() => nodes[2]!.acquire({ publicIp: '192.168.9.201', backendType: 'vxlan', backendData: data }))
        .then(() => nodes[3]!.acquire({ publicIp: '192.168.9.202', backendType: 'vxlan', backendData: data })), /no free \/26/);
    });

    void it('watch delivers added and removed', async () => {
      const prefix = '/watch';
      const a = await open(prefix);
      const b = await open(prefix);
      const { revision } = await a.list();
      const seen: LeaseEvent[] = [];
      a.watch(revision, (ev) => seen.push(ev));
      const lb = await b.acquire({ publicIp: '192.168.60.2', backendType: 'vxlan', backendData: data });
      await until(() => seen.length === 1);
      assert.deepEqual(seen[0], { type: 'added', lease: { ...lb, expiration: 0 } });
      await admin.delete().key(key(prefix, lb)).exec(); // deleted by an operator
      await until(() => seen.length >= 2);
      assert.equal(seen[1]?.type, 'removed');
      assert.equal(seen[1]?.lease.publicIp, '192.168.60.2');
    });

    void it('dual stack: flannel\'s "&" key and IPv6 JSON, watch, take-back on both families, IPv4-only lease upgraded in place', async () => {
      const prefix = '/dual';
      const dual = { ...vxlanConf, EnableIPv6: true, IPv6Network: 'fd00:10:244::/56' };
      await admin.put(`${prefix}/config`).value(JSON.stringify(dual));
      const v6 = (n: number) => ({ publicIpv6: `fd00:1::${n}`, backendV6Data: { VNI: 1, VtepMAC: `0a:58:00:00:01:0${n}` } });
      // A node that ran IPv4-only before: its old key must give way to a dual-stack one on the same IPv4 subnet.
      await admin.put(`${prefix}/subnets/10.244.42.0-24`).value('{"PublicIP":"192.168.70.1","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:00"}}');
      const a = await open(prefix, { netConf: false });
      assert.equal(a.netConf.ipv6Network, 'fd00:10:244::/56');
      const b = await open(prefix, { netConf: false });
      const { revision } = await b.list();
      const seen: LeaseEvent[] = [];
      b.watch(revision, (ev) => seen.push(ev));
      const la = await a.acquire({ publicIp: '192.168.70.1', backendType: 'vxlan', backendData: data, ...v6(1) });
      assert.equal(la.subnet, '10.244.42.0/24');
      assert.match(la.ipv6Subnet ?? '', /^fd00:10:244:[0-9a-f]+::\/64$/);
      const k = `${prefix}/subnets/10.244.42.0-24&${(la.ipv6Subnet ?? '').replace('/', '-')}`;
      assert.equal(await admin.get(k).string(),
        '{"PublicIP":"192.168.70.1","PublicIPv6":"fd00:1::1","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:00"},"BackendV6Data":{"VNI":1,"VtepMAC":"0a:58:00:00:01:01"}}');
      assert.equal(await admin.get(`${prefix}/subnets/10.244.42.0-24`).string(), null, 'the IPv4-only key stays');
      await until(() => seen.some((e) => e.type === 'added' && e.lease.publicIpv6 === 'fd00:1::1'));
      const ev = seen.filter((e) => e.type === 'added').at(-1);
      assert.deepEqual(ev?.lease, { ...la, expiration: 0 });
      await a.close();
      const again = await open(prefix, { netConf: false });
      const la2 = await again.acquire({ publicIp: '192.168.70.1', backendType: 'vxlan', backendData: data, ...v6(1) });
      assert.deepEqual([la2.subnet, la2.ipv6Subnet], [la.subnet, la.ipv6Subnet]);
      const lb = await b.acquire({ publicIp: '192.168.70.2', backendType: 'vxlan', backendData: data, ...v6(2), preferredIpv6Subnet: la.ipv6Subnet as string });
      assert.notEqual(lb.ipv6Subnet, la.ipv6Subnet, 'a held IPv6 subnet was handed out again');
      const n = seen.length;
      await admin.delete().key(k).exec(); // deleted by an operator
      await until(() => seen.slice(n).some((e) => e.type === 'removed' && e.lease.subnet === la.subnet));
    });

    void it('keeps its etcd lease alive; an abandoned lease expires and is reported removed', async () => {
      const prefix = '/ttl';
      const s = await open(prefix, { ttlSeconds: 3 });
      const t = await open(prefix, { ttlSeconds: 3 });
      const mine = await s.acquire({ publicIp: '192.168.70.1', backendType: 'vxlan', backendData: data });
      const { revision } = await s.list();
      const seen: LeaseEvent[] = [];
      s.watch(revision, (ev) => seen.push(ev));
      const gone = await t.acquire({ publicIp: '192.168.70.2', backendType: 'vxlan', backendData: data });
      await t.close(); // stops keep-alive without releasing
      await until(() => seen.some((e) => e.type === 'removed' && e.lease.subnet === gone.subnet), 10_000);
      await sleep(2000); // well past the 3 s TTL of the first grant
      assert.ok(await admin.get(key(prefix, mine)).exists(), 'own lease expired despite keep-alive');
      const kv = (await admin.get(key(prefix, mine)).exec()).kvs[0];
      assert.ok(Number((await admin.leaseClient.leaseTimeToLive({ ID: kv!.lease })).TTL) > 0);
    });

    void it('re-lists after compaction and still delivers the changes', async () => {
      const prefix = '/compact';
      const errors: Error[] = [];
      const a = await open(prefix, { onError: (e) => errors.push(e) });
      const b = await open(prefix);
      const { revision } = await a.list();
      const l1 = await b.acquire({ publicIp: '192.168.80.1', backendType: 'vxlan', backendData: data });
      await b.release(l1);
      const c = await open(prefix);
      const l2 = await c.acquire({ publicIp: '192.168.80.2', backendType: 'vxlan', backendData: data });
      const now = (await admin.getAll().prefix('/').exec()).header.revision;
      await admin.kv.compact({ revision: now, physical: true });
      const seen: LeaseEvent[] = [];
      a.watch(revision, (ev) => seen.push(ev));
      await until(() => seen.some((e) => e.type === 'added' && e.lease.subnet === l2.subnet));
      assert.ok(errors.some((e) => /compacted.*re-listing/.test(e.message)), `no compaction error seen: ${errors.map((e) => e.message).join('; ')}`);
      assert.deepEqual((await a.list()).leases.map((l) => l.publicIp), ['192.168.80.2']);
    });

    void it('survives etcd being stopped and restarted: reconnects, keeps its lease, sees new leases', async () => {
      const prefix = '/restart';
      const a = await open(prefix, { resyncMs: 1000 });
      const mine = await a.acquire({ publicIp: '192.168.90.1', backendType: 'vxlan', backendData: data });
      const { revision } = await a.list();
      const seen: LeaseEvent[] = [];
      a.watch(revision, (ev) => seen.push(ev));
      await stopEtcd();
      await sleep(3000);
      await startEtcd();
      const b = await open(prefix);
      const lb = await b.acquire({ publicIp: '192.168.90.2', backendType: 'vxlan', backendData: data });
      await until(() => seen.some((e) => e.type === 'added' && e.lease.subnet === lb.subnet), 10_000);
      const renewed = await a.renew(mine);
      assert.equal(renewed.subnet, mine.subnet);
      assert.equal(JSON.parse((await admin.get(key(prefix, mine)).string()) ?? '{}').PublicIP, '192.168.90.1');
    });

    void it('watch resumes after an etcd restart: changes made as etcd comes back are delivered, the break is reported', async () => {
      const prefix = '/gap';
      const errors: Error[] = [];
      const a = await open(prefix, { onError: (e) => errors.push(e) });
      const b = await open(prefix);
      const lb = await b.acquire({ publicIp: '192.168.91.2', backendType: 'vxlan', backendData: data });
      const { revision } = await a.list();
      const seen: LeaseEvent[] = [];
      a.watch(revision, (ev) => seen.push(ev));
      await b.close(); // its key stays (24 h etcd lease)
      await stopEtcd();
      await sleep(2500); // the watch's back-off reaches its 2 s cap
      await startEtcd();
      // Written before the watch is back (it retries every 2 s at most): seen through the resumed
      // watch from the last revision + 1 or through the re-list after reconnecting.
      await admin.delete().key(key(prefix, lb)).exec();
      await admin.put(`${prefix}/subnets/10.244.77.0-24`).value('{"PublicIP":"192.168.91.3","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:4d:00"}}');
      await until(() => seen.some((e) => e.type === 'removed' && e.lease.subnet === lb.subnet) && seen.some((e) => e.type === 'added' && e.lease.subnet === '10.244.77.0/24'), 10_000);
      assert.ok(errors.some((e) => /etcd watch of \/gap\/subnets\/: .*resuming from revision/.test(e.message)), `the break was not reported: ${errors.map((e) => e.message).join('; ')}`);
      assert.deepEqual((await a.list()).leases.map((l) => l.subnet), ['10.244.77.0/24']);
    });

    void it('re-creates its lease when etcd lost its data, and reports it', async () => {
      const prefix = '/wipe';
      const a = await open(prefix, { resyncMs: 1000 });
      const mine = await a.acquire({ publicIp: '192.168.95.1', backendType: 'vxlan', backendData: data });
      a.watch((await a.list()).revision, () => undefined);
      const lost: LeaseLostEvent[] = [];
      a.onLost((ev) => lost.push(ev));
      await stopEtcd();
      rmSync(join(dataDir, 'd'), { recursive: true, force: true });
      await startEtcd();
      await until(() => lost.length === 1, 15_000);
      assert.equal(lost[0]?.lost.subnet, mine.subnet);
      assert.equal(lost[0]?.current.subnet, mine.subnet);
      assert.equal(JSON.parse((await admin.get(key(prefix, mine)).string()) ?? '{}').PublicIP, '192.168.95.1');
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}
