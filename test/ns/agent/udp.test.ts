// weftd with Backend udp in a namespace of its own, a fake peer node in a second namespace (a
// python UDP endpoint on 192.0.2.12:8285 holding the lease 10.244.77.0/24): flannel0's kernel
// state, the wire format both ways (raw inner IPv4 as the UDP payload, TTL decremented), ICMP net
// unreachable for unleased destinations, and a stranger's datagram dropped and counted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatLeaseFile, leasePath } from '../../../agent/lease/file/lease-io.ts';
import { createTestNetns, spawnInNetns, ipJson, rootOnly, type TestNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Binds addr:8285, optionally sends one datagram (hex payload) to 192.0.2.11:8285, then prints the
// first datagram received within 3 s as "<sender> <hex>", or "timeout".
const PEER = `
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 8285))
s.settimeout(3)
if len(sys.argv) > 2: s.sendto(bytes.fromhex(sys.argv[2]), ('192.0.2.11', 8285))
try:
    d, a = s.recvfrom(65535)
    print(a[0], d.hex())
except socket.timeout:
    print('timeout')
`;

function csum(b: Buffer): number {
  let s = 0;
  for (let i = 0; i < b.length; i += 2) s += (b[i] as number) * 256 + (b[i + 1] ?? 0);
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return ~s & 0xffff;
}

/** An ICMP echo request src -> dst as raw IPv4 bytes (hex). */
function echoHex(src: string, dst: string): string {
  const icmp = Buffer.from('08000000beef0001776566742d6e73', 'hex');
  icmp.writeUInt16BE(csum(icmp), 2);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45; ip.writeUInt16BE(20 + icmp.length, 2); ip[8] = 64; ip[9] = 1;
  Buffer.from(src.split('.').map(Number)).copy(ip, 12);
  Buffer.from(dst.split('.').map(Number)).copy(ip, 16);
  ip.writeUInt16BE(csum(ip), 10);
  return Buffer.concat([ip, icmp]).toString('hex');
}

void describe('weftd udp backend in a namespace', rootOnly(), () => {
  let node: TestNetns;
  let peer: TestNetns;
  let dir: string;
  let weftd: ChildProcess | undefined;
  let own = '';
  const peerRun = (args: string[]) => peer.exec(['/usr/bin/python3', '-c', PEER, ...args]);
  const metric = async (key: string) => {
    const r = await node.exec(['curl', '-fsS', '--max-time', '2', 'http://127.0.0.1:9101/metrics']);
    const line = r.stdout.split('\n').find((l) => l.startsWith(`${key} `));
    return Number(line?.split(' ')[1] ?? 0);
  };

  before(async () => {
    node = await createTestNetns();
    peer = await createTestNetns();
    dir = mkdtempSync(join(tmpdir(), 'weftd-udp-'));
    for (const [ns, cmd] of [
      [node, ['ip', 'link', 'set', 'lo', 'up']], [peer, ['ip', 'link', 'set', 'lo', 'up']],
      [node, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', peer.name]],
      [node, ['ip', 'addr', 'add', '192.0.2.11/24', 'dev', 'eth0']], [node, ['ip', 'link', 'set', 'eth0', 'up']],
      [peer, ['ip', 'addr', 'add', '192.0.2.12/24', 'dev', 'eth0']], [peer, ['ip', 'addr', 'add', '192.0.2.99/24', 'dev', 'eth0']],
      [peer, ['ip', 'link', 'set', 'eth0', 'up']],
    ] as const) {
      const r = await ns.exec([...cmd]);
      assert.equal(r.code, 0, `${cmd.join(' ')}: ${r.stderr}`);
    }
    // The own lease stays out of 10.244.{5,77,99}.0/24, the subnets the cases use as foreign, leased and unleased.
    writeFileSync(join(dir, 'net-conf.json'), JSON.stringify({ Network: '10.244.0.0/16', SubnetMin: '10.244.100.0', SubnetMax: '10.244.250.0', Backend: { Type: 'udp' } }));
    const leases = join(dir, 'leases');
    weftd = spawnInNetns(node.name, [process.execPath, '--import', 'tsx', join(ROOT, 'agent', 'main.ts'),
      '--net-conf', join(dir, 'net-conf.json'), '--store', `file:${leases}`, '--iface', 'eth0', '--subnet-file', join(dir, 'subnet.env'),
      '--resync-interval', '500', '--metrics-addr', '127.0.0.1:9101'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const end = Date.now() + 20_000;
    while ((await node.exec(['curl', '-fsS', '--max-time', '1', 'http://127.0.0.1:9101/healthz'])).code !== 0) {
      if (Date.now() > end || weftd.exitCode !== null) throw new Error('weftd did not become healthy');
      await sleep(100);
    }
    own = /FLANNEL_SUBNET=([0-9.]+)\.1\/24/.exec(readFileSync(join(dir, 'subnet.env'), 'utf8'))?.[1] ?? '';
    const lease = { subnet: '10.244.77.0/24', publicIp: '192.0.2.12', backendType: 'udp', backendData: {}, expiration: Date.now() + 3_600_000 };
    writeFileSync(join(leases, '.t'), formatLeaseFile(lease));
    renameSync(join(leases, '.t'), leasePath(leases, lease.subnet));
    await sleep(1500); // the lease watch and one reconcile pass
  });
  after(async () => {
    if (weftd && weftd.exitCode === null) {
      const done = new Promise((r) => weftd?.once('close', r));
      weftd.kill('SIGTERM');
      await done;
    }
    await node?.destroy();
    await peer?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('flannel0 is a TUN with MTU 1472, <subnet>.0/32 and the Network routed through it', async () => {
    assert.match(own, /^10\.244\.\d+$/);
    const [link] = await ipJson<Array<{ mtu: number; txqlen: number; linkinfo?: { info_kind?: string }; addr_info: Array<{ family: string; local: string; prefixlen: number }> }>>(node, ['-d', 'addr', 'show', 'dev', 'flannel0']);
    assert.equal(link?.linkinfo?.info_kind, 'tun');
    assert.equal(link?.mtu, 1472);
    assert.equal(link?.txqlen, 5000);
    assert.deepEqual(link?.addr_info.map((a) => `${a.family} ${a.local}/${a.prefixlen}`), [`inet ${own}.0/32`], 'IPv4 only');
    const routes = await ipJson<Array<{ dst: string; dev: string }>>(node, ['route', 'show', '10.244.0.0/16']);
    assert.deepEqual(routes.map((r) => r.dev), ['flannel0']);
  });

  it('a packet to the peer\'s subnet leaves as a UDP datagram to 192.0.2.12:8285 carrying the IPv4 packet, TTL - 1', async () => {
    const recv = peerRun(['192.0.2.12']);
    await sleep(300);
    await node.exec(['ping', '-c', '1', '-W', '1', '-t', '9', '10.244.77.5']);
    const out = (await recv).stdout.trim().split(' ');
    assert.equal(out[0], '192.0.2.11', `datagram from the node address: ${out.join(' ')}`);
    const p = Buffer.from(out[1] ?? '', 'hex');
    assert.equal(p[0], 0x45);
    assert.equal(p[8], 8, 'TTL 9 - 1');
    assert.equal(p[9], 1);
    assert.equal([...p.subarray(12, 16)].join('.'), `${own}.0`);
    assert.equal([...p.subarray(16, 20)].join('.'), '10.244.77.5');
    assert.equal(csum(p.subarray(0, 20)), 0, 'header checksum still valid');
  });

  it('the peer\'s echo request reaches the node and the reply comes back over UDP', async () => {
    const out = (await peerRun(['192.0.2.12', echoHex('10.244.77.5', `${own}.0`)])).stdout.trim().split(' ');
    assert.equal(out[0], '192.0.2.11');
    const p = Buffer.from(out[1] ?? '', 'hex');
    assert.equal([...p.subarray(16, 20)].join('.'), '10.244.77.5');
    assert.equal(p[20], 0, 'ICMP echo reply');
    assert.ok(await metric('weftd_udp_packets_total{direction="rx"}') >= 1);
  });

  it('a stranger (no lease) gets nothing through and is counted; a spoofed inner source too', async () => {
    const before0 = await metric('weftd_udp_drops_total{reason="unknown-node"}');
    const out = (await peerRun(['192.0.2.99', echoHex('10.244.77.5', `${own}.0`)])).stdout.trim();
    // The legitimate peer port would receive the reply if the stranger's packet had been delivered.
    assert.equal(out, 'timeout');
    assert.equal(await metric('weftd_udp_drops_total{reason="unknown-node"}'), before0 + 1);
    const f0 = await metric('weftd_udp_drops_total{reason="foreign-source"}');
    assert.equal((await peerRun(['192.0.2.12', echoHex('10.244.5.5', `${own}.0`)])).stdout.trim(), 'timeout');
    assert.equal(await metric('weftd_udp_drops_total{reason="foreign-source"}'), f0 + 1);
  });

  it('an unleased destination gets ICMP net unreachable from flannel0', async () => {
    const r = await node.exec(['ping', '-c', '1', '-W', '1', '10.244.99.1']);
    assert.match(r.stdout, new RegExp(`From ${own.replace(/\./g, '\\.')}\\.0 .*Destination Net Unreachable`));
    assert.ok(await metric('weftd_udp_icmp_errors_sent_total{type="net-unreachable"}') >= 1);
  });

  it('SIGTERM: weftd exits and flannel0 goes with its fd', async () => {
    const done = new Promise<number | null>((r) => weftd?.once('close', (c) => r(c)));
    weftd?.kill('SIGTERM');
    assert.equal(await done, 0);
    const r = await node.exec(['ip', 'link', 'show', 'flannel0']);
    assert.notEqual(r.code, 0);
  });
});
