// Issue 6, must show: over the udp backend (flannel0 + weftd's forwarder) every pod reaches every
// other pod on 3 nodes; a host on the underlay without a lease cannot inject packets to a pod
// through node 1's port 8285, and the drop is counted in /metrics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { pingMatrix } from '../../../testkit/probe.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import { allProbes, skipReason, weftRoutes } from './helpers.ts';

const DROPS = 'weftd_udp_drops_total';

/** A python3 one-shot that sends one UDP datagram (payload: an IPv4 ICMP echo request src -> dst) to host:port. */
function injectScript(src: string, dst: string, host: string, port: number, count: number): string {
  return `
import socket, struct
def csum(b):
    if len(b) % 2: b += b'\\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
src, dst = socket.inet_aton('${src}'), socket.inet_aton('${dst}')
payload = b'weft-stranger-probe'
icmp = struct.pack('!BBHHH', 8, 0, 0, 0x4242, 1) + payload
icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), 1, 0, 64, 1, 0, src, dst)
hdr = hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(${count}):
    s.sendto(hdr + icmp, ('${host}', ${port}))
`;
}

// A TCP sink on :7777 printing the sha256 of everything received, and a source sending 32 MiB
// of random bytes (in uneven writes, so segment sizes vary) and printing their sha256.
const SINK = `
import socket, hashlib
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', 7777)); s.listen(1)
c, _ = s.accept(); h = hashlib.sha256()
while True:
    d = c.recv(1 << 20)
    if not d: break
    h.update(d)
print(h.hexdigest())
`;
const SOURCE = `
import socket, hashlib, os, sys, random
c = socket.create_connection((sys.argv[1], 7777)); h = hashlib.sha256(); left = 32 << 20
while left > 0:
    d = os.urandom(min(left, random.randint(1, 300000))); h.update(d); c.sendall(d); left -= len(d)
c.close(); print(h.hexdigest())
`;

/** weftd_udp_drops_total{reason=...} of a node. */
async function drops(c: Cluster, n: ClusterNode, reason: string): Promise<number> {
  return (await c.metrics(n)).get(`${DROPS}{reason="${reason}"}`) ?? 0;
}

/** ICMP echo requests with our probe id (0x4242) seen on the pod's eth0 during `fn`. */
async function echoRequestsSeen(pod: ClusterPod, fn: () => Promise<void>): Promise<number> {
  const cap = nsExec(pod.netns, ['timeout', '4', 'tcpdump', '-n', '-l', '-i', 'eth0', 'icmp and icmp[4:2] = 0x4242'], { timeoutMs: 10_000 });
  await new Promise((r) => setTimeout(r, 1000)); // tcpdump attaches
  await fn();
  const r = await cap;
  return r.stdout.split('\n').filter((l) => l.includes('echo request')).length;
}

void describe('udp backend (flannel0 + forwarder), file store', { skip: skipReason(), timeout: 240_000 }, () => {
  let c: Cluster | undefined;
  before(async () => { c = await Cluster.create({ backend: 'udp', store: 'file', nodes: 3, podsPerNode: 2 }); });
  after(() => c?.destroy());

  it('flannel0 on every node: TUN, MTU 1472, <subnet>.0/32, the Network routed through it, no per-lease routes', async () => {
    assert.ok(c);
    for (const n of c.nodes) {
      const r = await nsExec(n.netns, ['ip', '-j', '-d', 'addr', 'show', 'dev', 'flannel0']);
      const [link] = JSON.parse(r.stdout) as Array<{ mtu: number; linkinfo?: { info_kind?: string }; addr_info: Array<{ family: string; local: string; prefixlen: number }> }>;
      assert.ok(link, `flannel0 on ${n.netns}`);
      assert.equal(link.mtu, 1472, 'uplink 1500 - 28');
      assert.equal(link.linkinfo?.info_kind, 'tun');
      assert.deepEqual(link.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`), [`${n.subnet?.split('/')[0]}/32`]);
      const routes = JSON.parse((await nsExec(n.netns, ['ip', '-j', 'route', 'show', '10.244.0.0/16'])).stdout) as Array<{ dev: string }>;
      assert.deepEqual(routes.map((x) => x.dev), ['flannel0']);
      assert.deepEqual(await weftRoutes(n), []);
      const env = (await nsRun(n.netns, ['cat', n.subnetFile]));
      assert.match(env, /FLANNEL_MTU=1472/);
    }
  });

  it('every pod reaches every pod and node, every node every pod', async () => {
    assert.ok(c);
    const res = await pingMatrix(allProbes(c));
    assert.equal(res.length, 6 * 5 + 6 * 3 + 3 * 6);
    assert.deepEqual(res.filter((r) => !r.ok).map((r) => `${r.from}->${r.to}`), []);
    const m = await c.metrics(c.nodes[0] as ClusterNode);
    assert.ok((m.get('weftd_udp_packets_total{direction="tx"}') ?? 0) > 0, 'node 1 forwarded packets out');
    assert.ok((m.get('weftd_udp_packets_total{direction="rx"}') ?? 0) > 0, 'node 1 forwarded packets in');
  });

  it('a 32 MiB TCP transfer across nodes arrives byte for byte (sha256), both ways through the coalescing path', async () => {
    assert.ok(c);
    const a = c.pods.find((p) => p.node === c?.nodes[0]) as ClusterPod;
    const b = c.pods.find((p) => p.node === c?.nodes[1]) as ClusterPod;
    for (const [from, to] of [[a, b], [b, a]] as const) {
      const server = nsExec(to.netns, ['/usr/bin/python3', '-c', SINK], { timeoutMs: 60_000 });
      await waitFor('sink listening', async () => (await nsExec(to.netns, ['ss', '-Hltn', 'sport = :7777'])).stdout.trim() !== '', 10_000);
      const sent = (await nsRun(from.netns, ['/usr/bin/python3', '-c', SOURCE, to.ip])).trim();
      const got = (await server).stdout.trim();
      assert.match(sent, /^[0-9a-f]{64}$/);
      assert.equal(got, sent, `${from.name} -> ${to.name}`);
    }
  });

  it('a pod pinging an address no lease covers gets ICMP net unreachable from its node\'s flannel0', async () => {
    assert.ok(c);
    const pod = c.pods[0] as ClusterPod;
    const r = await nsExec(pod.netns, ['ping', '-c', '1', '-W', '1', '10.244.250.1']);
    const from = `${pod.node.subnet?.split('/')[0] ?? '?'}`;
    assert.ok(r.stdout.includes(`From ${from} `) && r.stdout.includes('Destination Net Unreachable'), r.stdout);
  });

  it('a host on the underlay without a lease cannot reach a pod through port 8285; the drop is counted', async () => {
    assert.ok(c);
    const n1 = c.nodes[0] as ClusterNode;
    const n2 = c.nodes[1] as ClusterNode;
    const pod = c.pods.find((p) => p.node === n1) as ClusterPod;
    const podOf2 = c.pods.find((p) => p.node === n2) as ClusterPod;
    const stranger = await c.topo.addUnderlayHost('strg', '192.0.2.250');
    // Control: the same bytes from node 2 (a lease holder, inner source in its subnet) do reach the pod.
    const seenFromPeer = await echoRequestsSeen(pod, async () => {
      await nsRun(n2.netns, ['/usr/bin/python3', '-c', injectScript(podOf2.ip, pod.ip, n1.ip, 8285, 3)]);
    });
    assert.equal(seenFromPeer, 3, 'control: a lease holder\'s datagram is delivered');

    const before0 = await drops(c, n1, 'unknown-node');
    const seen = await echoRequestsSeen(pod, async () => {
      await nsRun(stranger.netns, ['/usr/bin/python3', '-c', injectScript(podOf2.ip, pod.ip, n1.ip, 8285, 5)]);
    });
    assert.equal(seen, 0, 'no echo request from the stranger reached the pod');
    await waitFor('unknown-node drops', async () => (await drops(c as Cluster, n1, 'unknown-node')) >= before0 + 5, 5000);

    // A lease holder spoofing a source outside its subnet is dropped too.
    const beforeF = await drops(c, n1, 'foreign-source');
    const spoofed = await echoRequestsSeen(pod, async () => {
      await nsRun(n2.netns, ['/usr/bin/python3', '-c', injectScript('10.244.250.9', pod.ip, n1.ip, 8285, 2)]);
    });
    assert.equal(spoofed, 0);
    assert.equal(await drops(c, n1, 'foreign-source'), beforeF + 2);
  });
});

void describe('udp backend: the addon\'s TCP segmentation, verified by the receiving pod', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster | undefined;
  after(() => c?.destroy());

  it('with receive coalescing off (WEFT_UDP_GRO=0) every segment is checksummed by the pod: 32 MiB intact, no TcpInCsumErrors', async () => {
    // weftd inherits the environment: coalescing off, so the pod's TCP verifies each segment the sender's addon cut.
    process.env['WEFT_UDP_GRO'] = '0';
    try {
      c = await Cluster.create({ backend: 'udp', store: 'file', nodes: 2, podsPerNode: 1 });
    } finally {
      delete process.env['WEFT_UDP_GRO'];
    }
    const [a, b] = c.pods as [ClusterPod, ClusterPod];
    const server = nsExec(b.netns, ['/usr/bin/python3', '-c', SINK], { timeoutMs: 60_000 });
    await waitFor('sink listening', async () => (await nsExec(b.netns, ['ss', '-Hltn', 'sport = :7777'])).stdout.trim() !== '', 10_000);
    const sent = (await nsRun(a.netns, ['/usr/bin/python3', '-c', SOURCE, b.ip])).trim();
    assert.equal((await server).stdout.trim(), sent);
    const stat = (await nsRun(b.netns, ['nstat', '-az', 'TcpInCsumErrors', 'TcpInSegs'])).split('\n');
    const val = (name: string) => Number(stat.find((l) => l.startsWith(name))?.split(/\s+/)[1] ?? NaN);
    assert.ok(val('TcpInSegs') > 20_000, `the pod received segments one by one (${val('TcpInSegs')})`);
    assert.equal(val('TcpInCsumErrors'), 0);
  });
});
