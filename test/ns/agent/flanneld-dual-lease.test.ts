// Dual-stack leases between the real flanneld (scripts/flannel-setup.sh) and weft's etcd store,
// at the store level: each reads the other's "&" key, PublicIPv6 and BackendV6Data (flanneld
// programs flannel-v6.<VNI> entries for weft's lease), both parse flanneld's subnet.env, and a lease
// moves flanneld -> weft -> flanneld keeping both subnets. Run as root: the file re-executes
// itself under `ip netns exec` in a namespace it creates (etcd on its lo, flanneld on a veth
// uplink there) and always deletes the namespace. Nothing touches the root namespace.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { type EtcdLeaseStore, openEtcdLeaseStore } from '../../../agent/lease/etcd/store.ts';
import { networkForm, parseSubnetEnv } from '../../../lib/flannel/subnet-env.ts';
import { parseFlannelSubnetFile } from '../../../lib/flannel/subnet-file.ts';
import { createTestNetnsSync, inNetns } from '../../../testkit/netns.ts';

const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;
const INNER = process.env['WEFT_FLANNELD_NS'];
const thisFile = fileURLToPath(import.meta.url);

function has(cmd: string, arg = '--version'): boolean {
  try { execFileSync(cmd, [arg], { stdio: 'ignore' }); return true; } catch { return false; }
}

if (INNER === undefined) {
  const skip = process.getuid?.() !== 0 ? 'needs root' : !has('etcd') ? 'etcd not installed'
    : !existsSync(FLANNELD) ? `${FLANNELD} missing: run scripts/flannel-setup.sh` : !has('ip6tables') ? 'ip6tables not installed' : false;
  void test('flanneld and weft dual-stack leases, in a network namespace of its own', { skip, timeout: 300_000 }, async () => {
    const kit = createTestNetnsSync();
    const ns = kit.name;
    try {
      execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
      const env: NodeJS.ProcessEnv = { ...process.env, WEFT_FLANNELD_NS: ns, WEFT_FLANNELD_PARENT_NETNS: readlinkSync('/proc/self/ns/net') };
      delete env['NODE_TEST_CONTEXT'];
      const [file = 'ip', ...args] = inNetns(ns, [process.execPath, '--import', 'tsx', '--test-reporter=tap', thisFile]);
      const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString(); process.stderr.write(d); });
      child.stderr.on('data', (d: Buffer) => { out += d.toString(); process.stderr.write(d); });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      assert.equal(code, 0, `inner tests failed:\n${out.slice(-4000)}`);
      assert.match(out, /# pass [1-9]/);
      assert.match(out, /# fail 0/);
    } finally {
      kit.destroySync(); // kills what the inner run left (etcd, flanneld on a crash), then deletes the namespace
    }
  });
} else {
  innerTests();
}

function innerTests(): void {
  if (readlinkSync('/proc/self/ns/net') === (process.env['WEFT_FLANNELD_PARENT_NETNS'] ?? '')) throw new Error('inner tests must run inside the test namespace');
  const url = 'http://127.0.0.1:2379';
  const dir = mkdtempSync(join(tmpdir(), 'weft-fl6-'));
  const subnetFile = join(dir, 'subnet.env');
  const prefix = '/coreos.com/network';
  const conf = { Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'vxlan' } };
  const procs: ChildProcess[] = [];
  const stores: EtcdLeaseStore[] = [];
  let admin: Etcd3;
  let flanneld: ChildProcess | undefined;
  let runs = 0;

  const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });
  const json = <T>(cmd: string, ...args: string[]) => JSON.parse(execFileSync(cmd, ['-j', ...args], { encoding: 'utf8' }) || '[]') as T;
  const logOf = (n: number) => { try { return readFileSync(join(dir, `flanneld-${n}.log`), 'utf8'); } catch { return ''; } };

  /** Starts flanneld and waits until it wrote subnet.env ("Wrote subnet file" in its log). */
  async function startFlanneld(): Promise<void> {
    const n = ++runs;
    const log = openSync(join(dir, `flanneld-${n}.log`), 'w');
    const p = spawn(FLANNELD, ['--etcd-endpoints', url, '--iface', 'up0', '--subnet-file', subnetFile], { stdio: ['ignore', log, log] });
    flanneld = p;
    procs.push(p);
    await until(() => {
      if (p.exitCode !== null) throw new Error(`flanneld exited ${p.exitCode}: ${logOf(n).slice(-2000)}`);
      return logOf(n).includes('Wrote subnet file');
    }, 30_000);
  }
  async function stopFlanneld(): Promise<void> {
    const p = flanneld;
    flanneld = undefined;
    if (!p || p.exitCode !== null) return;
    const closed = new Promise((r) => p.once('close', r));
    p.kill('SIGTERM');
    await closed;
  }

  before(async () => {
    process.on('exit', () => { for (const p of procs) p.kill('SIGKILL'); });
    ip('link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'up0p');
    ip('link', 'set', 'up0p', 'up');
    ip('addr', 'add', '10.99.0.1/24', 'dev', 'up0');
    ip('addr', 'add', 'fd00:99::1/64', 'dev', 'up0', 'nodad');
    ip('link', 'set', 'up0', 'up');
    const etcd = spawn('etcd', ['--name', 't', '--data-dir', join(dir, 'etcd'), '--listen-client-urls', url, '--advertise-client-urls', url,
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://127.0.0.1:2380',
      '--initial-cluster', 't=http://127.0.0.1:2380', '--log-level', 'error'], { stdio: 'ignore' });
    procs.push(etcd);
    await until(async () => {
      try { return ((await (await fetch(`${url}/health`)).json()) as { health?: string }).health === 'true'; } catch { return false; }
    }, 20_000);
    admin = new Etcd3({ hosts: [url] });
    await admin.put(`${prefix}/config`).value(JSON.stringify(conf));
  });
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    admin?.close();
    await stopFlanneld();
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<EtcdLeaseStore> {
    const s = await openEtcdLeaseStore({ endpoints: [url], prefix });
    stores.push(s);
    return s;
  }

  void describe('flanneld <-> weft dual-stack leases', () => {
    let flSubnet = '';
    let flSubnet6 = '';

    void it('weft reads flanneld\'s subnet.env and its dual-stack lease (key, PublicIPv6, BackendV6Data = flannel-v6.1\'s MAC)', async () => {
      await startFlanneld();
      const text = readFileSync(subnetFile, 'utf8');
      const env = parseSubnetEnv(text);
      assert.equal(env.network, '10.244.0.0/16');
      assert.equal(env.ipv6Network, 'fd00:10:244::/56');
      assert.match(env.ipv6Subnet ?? '', /^fd00:10:244:[0-9a-f]+::1\/64$/);
      assert.equal(parseFlannelSubnetFile(text, subnetFile).ipv6Subnet, env.ipv6Subnet);
      flSubnet = networkForm(env.subnet) ?? '';
      flSubnet6 = networkForm(env.ipv6Subnet ?? '') ?? '';
      const key = `${prefix}/subnets/${flSubnet.replace('/', '-')}&${flSubnet6.replace('/', '-')}`;
      assert.ok(await admin.get(key).exists(), `flanneld's key ${key}`);
      const s = await open();
      const l = (await s.list()).leases.find((x) => x.publicIp === '10.99.0.1');
      const mac6 = json<Array<{ address: string }>>('ip', 'link', 'show', 'flannel-v6.1')[0]?.address;
      const mac4 = json<Array<{ address: string }>>('ip', 'link', 'show', 'flannel.1')[0]?.address;
      assert.deepEqual(l && { ...l, expiration: 0 }, {
        subnet: flSubnet, ipv6Subnet: flSubnet6, publicIp: '10.99.0.1', publicIpv6: 'fd00:99::1', backendType: 'vxlan',
        backendData: { VNI: 1, VtepMAC: mac4 }, backendV6Data: { VNI: 1, VtepMAC: mac6 }, expiration: 0,
      });
    });

    void it('flanneld takes weft\'s dual-stack lease as a peer: IPv6 route, neighbour and FDB on flannel-v6.1', async () => {
      const s = await open();
      const mine = await s.acquire({
        publicIp: '10.99.0.2', publicIpv6: 'fd00:99::2', backendType: 'vxlan',
        backendData: { VNI: 1, VtepMAC: '0a:58:00:00:00:02' }, backendV6Data: { VNI: 1, VtepMAC: '0a:58:00:00:01:02' },
      });
      assert.ok(mine.ipv6Subnet);
      assert.notEqual(mine.ipv6Subnet, flSubnet6);
      const gw6 = (mine.ipv6Subnet).split('/')[0] as string;
      await until(() => json<Array<{ dst: string }>>('ip', '-6', 'route', 'show', 'dev', 'flannel-v6.1').some((r) => r.dst === mine.ipv6Subnet), 15_000);
      const neigh = json<Array<{ dst: string; lladdr?: string }>>('ip', '-6', 'neigh', 'show', 'dev', 'flannel-v6.1').filter((x) => x.dst === gw6);
      assert.deepEqual(neigh.map((x) => x.lladdr), ['0a:58:00:00:01:02']);
      const fdb = json<Array<{ mac: string; dst?: string }>>('bridge', 'fdb', 'show', 'dev', 'flannel-v6.1').filter((x) => x.mac === '0a:58:00:00:01:02');
      assert.deepEqual(fdb.map((x) => x.dst), ['fd00:99::2']);
      assert.ok(json<Array<{ dst: string }>>('ip', 'route', 'show', 'dev', 'flannel.1').some((r) => r.dst === mine.subnet), 'IPv4 route too');
      const errors = logOf(runs).split('\n').filter((x) => /^E\d{4}/.test(x));
      assert.deepEqual(errors, [], 'flanneld errors');
      await s.release(mine);
    });

    void it('the lease moves flanneld -> weft -> flanneld with both subnets', async () => {
      await stopFlanneld();
      const s = await open();
      const took = await s.acquire({
        publicIp: '10.99.0.1', publicIpv6: 'fd00:99::1', backendType: 'vxlan',
        backendData: { VNI: 1, VtepMAC: '0a:58:00:00:00:01' }, backendV6Data: { VNI: 1, VtepMAC: '0a:58:00:00:01:01' },
      });
      assert.deepEqual([took.subnet, took.ipv6Subnet], [flSubnet, flSubnet6]);
      await s.close();
      await startFlanneld();
      const env = parseSubnetEnv(readFileSync(subnetFile, 'utf8'));
      assert.deepEqual([networkForm(env.subnet), networkForm(env.ipv6Subnet ?? '')], [flSubnet, flSubnet6]);
      const keys = (await admin.getAll().prefix(`${prefix}/subnets/`).keys()).map(String);
      assert.deepEqual(keys, [`${prefix}/subnets/${flSubnet.replace('/', '-')}&${flSubnet6.replace('/', '-')}`]);
      const v = JSON.parse((await admin.get(keys[0] as string).string()) ?? '{}') as { PublicIPv6?: string; BackendV6Data?: { VtepMAC?: string } };
      assert.equal(v.PublicIPv6, 'fd00:99::1');
      assert.notEqual(v.BackendV6Data?.VtepMAC, '0a:58:00:00:01:01', 'flanneld rewrote the value with its own VTEP');
    });
  });
}

async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
