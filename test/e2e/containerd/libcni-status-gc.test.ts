// weft's conflists driven through the CNI library containerd 2 links (go-cni v1.1.14 and libcni
// v1.3.1, containerd v2.4.2's go.mod; Debian's containerd is 1.6, whose CRI Status never calls CNI
// STATUS): scripts/libcni-setup.sh builds test/tools/libcni-harness once. libcni picks 1.1.0 from
// "cniVersions", so CRI's Status reaches `flannel` (not ready, code 50, without subnet.env; then the
// bridge's and host-local's answer), GC reaches bridge and host-local, and ADD/DEL run at 1.1.0.
// Without "cniVersions" (cniVersion 1.0.0 alone, the conflists before) STATUS is never sent.
// Everything runs inside namespaces of this test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { netnsFixture, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { ROOT, drive as driveIn, libcniHarness } from './libcni-harness.ts';

const BIN = join(ROOT, 'dist', 'bin');

type ConfList = { cniVersion: string; cniVersions?: string[]; name: string; plugins: Array<Record<string, unknown>> };

void describe("containerd 2's libcni: STATUS and GC reach weft's conflists", { ...rootOnly(), timeout: 300_000 }, () => {
  const nets = netnsFixture('weft-lcni');
  const t = mkdtempSync(join(tmpdir(), 'weft-libcni-'));
  let harness = '';
  let node: TestNetns;
  after(() => rmSync(t, { recursive: true, force: true }));

  before(async () => {
    assert.ok(existsSync(join(BIN, 'flannel')), `${BIN}/flannel is missing: run npm run build`);
    harness = await libcniHarness();
    node = await nets.create();
  });

  /** Runs the harness inside the node namespace. */
  const drive = (args: string[]) => driveIn(node, harness, args);

  /** conf/<file> with the plugin paths under `dir`, written alone into `dir`/net.d; returns that conf dir. */
  function confDir(dir: string, file: string, edit: (c: ConfList) => void = () => undefined): string {
    const conf = JSON.parse(readFileSync(join(ROOT, 'conf', file), 'utf8')) as ConfList;
    edit(conf);
    const d = join(dir, 'net.d');
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, file), JSON.stringify(conf));
    return d;
  }

  const flannelPaths = (dir: string, ipamDir: string) => (c: ConfList): void => {
    const p = c.plugins[0] as Record<string, unknown>;
    Object.assign(p, { subnetFile: join(dir, 'subnet.env'), dataDir: join(dir, 'flannel'), ipam: { dataDir: ipamDir } });
  };
  const SUBNET_ENV = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

  it('STATUS: 1.1.0 picked; code 50 while the node has no subnet.env, then host-local\'s answer through bridge', async () => {
    const dir = join(t, 'status');
    const d = confDir(dir, '10-flannel.conflist', flannelPaths(dir, join(dir, 'ipam')));
    const missing = await drive(['status', '--conf-dir', d, '--bin-dir', BIN]);
    assert.deepEqual(missing.versions, ['cni-loopback=0.3.1', 'cbr0=1.1.0'], JSON.stringify(missing));
    assert.equal(missing.ok, false);
    assert.equal(missing.code, 50, JSON.stringify(missing));
    assert.match(missing.error ?? '', /no subnet lease/);
    writeFileSync(join(dir, 'subnet.env'), SUBNET_ENV);
    const ready = await drive(['status', '--conf-dir', d, '--bin-dir', BIN]);
    assert.equal(ready.ok, true, JSON.stringify(ready));
    // host-local's own STATUS, reached through flannel's rendered bridge delegate: its data dir is a file.
    const bad = join(dir, 'not-a-dir');
    writeFileSync(bad, '');
    const d2 = confDir(join(dir, 'b'), '10-flannel.conflist', flannelPaths(dir, bad));
    const ipamDown = await drive(['status', '--conf-dir', d2, '--bin-dir', BIN]);
    assert.equal(ipamDown.code, 50, JSON.stringify(ipamDown));
    assert.match(ipamDown.error ?? '', /host-local data dir is unusable/);
  });

  it('without cniVersions (cniVersion 1.0.0 alone) libcni never sends STATUS', async () => {
    const dir = join(t, 'old');
    const d = confDir(dir, '10-flannel.conflist', (c) => {
      flannelPaths(dir, join(dir, 'ipam'))(c);
      delete c.cniVersions;
    });
    const r = await drive(['status', '--conf-dir', d, '--bin-dir', BIN]);
    assert.deepEqual(r.versions, ['cni-loopback=0.3.1', 'cbr0=1.0.0']);
    assert.equal(r.ok, true, 'no subnet.env, and still "ready": STATUS was not called');
  });

  it('ADD and DEL at 1.1.0 through flannel, bridge, host-local and portmap', async () => {
    const dir = join(t, 'add');
    const pod = await nets.create();
    confDir(dir, '10-flannel.conflist', flannelPaths(dir, join(dir, 'ipam')));
    writeFileSync(join(dir, 'subnet.env'), SUBNET_ENV);
    const list = join(dir, 'net.d', '10-flannel.conflist');
    const common = ['--conflist', list, '--bin-dir', BIN, '--cache-dir', join(dir, 'cache'), '--netns', pod.path, '--id', 'pod-1'];
    const add = await drive(['add', ...common]);
    assert.equal(add.ok, true, JSON.stringify(add));
    assert.equal(add.cniVersion, '1.1.0');
    assert.equal(add.result?.cniVersion, '1.1.0');
    assert.deepEqual(add.result?.ips?.map((i) => i.address), ['10.244.7.2/24']);
    assert.deepEqual(readdirSync(join(dir, 'ipam', 'cbr0')).filter((f) => f.startsWith('10.')), ['10.244.7.2']);
    const del = await drive(['del', ...common]);
    assert.equal(del.ok, true, JSON.stringify(del));
    assert.deepEqual(readdirSync(join(dir, 'ipam', 'cbr0')).filter((f) => f.startsWith('10.')), []);
  });

  it('GC reaches flannel\'s delegate: an attachment the runtime forgot loses its veth and address, a valid one keeps them', async () => {
    const dir = join(t, 'fgc');
    confDir(dir, '10-flannel.conflist', flannelPaths(dir, join(dir, 'ipam')));
    writeFileSync(join(dir, 'subnet.env'), SUBNET_ENV);
    const list = join(dir, 'net.d', '10-flannel.conflist');
    const addPod = async (id: string): Promise<void> => {
      const pod = await nets.create();
      const r = await drive(['add', '--conflist', list, '--bin-dir', BIN, '--cache-dir', join(dir, 'cache'), '--netns', pod.path, '--id', id]);
      assert.equal(r.ok, true, JSON.stringify(r));
    };
    await addPod('kept-pod');
    await addPod('forgotten-pod');
    const veths = async (): Promise<number> => (await node.exec(['ip', '-o', 'link', 'show', 'type', 'veth'])).stdout.trim().split('\n').filter((l) => l !== '').length;
    assert.equal(await veths(), 2);
    assert.deepEqual(readdirSync(join(dir, 'ipam', 'cbr0')).filter((f) => f.startsWith('10.')), ['10.244.7.2', '10.244.7.3']);
    // A runtime that lost its cache (an empty cache dir): libcni has nothing to DEL, only the plugins' GC frees.
    const gc = await drive(['gc', '--conflist', list, '--bin-dir', BIN, '--cache-dir', join(dir, 'empty-cache'), '--valid', 'kept-pod/eth0']);
    assert.equal(gc.ok, true, JSON.stringify(gc));
    assert.deepEqual(readdirSync(join(dir, 'ipam', 'cbr0')).filter((f) => f.startsWith('10.')), ['10.244.7.2']);
    assert.equal(await veths(), 1, 'the forgotten pod\'s host veth is gone');
  });

  it('GC reaches bridge and host-local: a leaked reservation goes, a valid one stays', async () => {
    const dir = join(t, 'gc');
    const ipam = join(dir, 'ipam');
    confDir(dir, 'weft-bridge.conflist', (c) => {
      const p = c.plugins[0] as { bridge: string; ipam: Record<string, unknown> };
      p.bridge = 'wlcni0';
      p.ipam = { type: 'host-local', ranges: [[{ subnet: '10.99.7.0/24' }]], dataDir: ipam };
    });
    const net = join(ipam, 'weft');
    mkdirSync(net, { recursive: true });
    writeFileSync(join(net, '10.99.7.10'), 'live-pod\r\neth0');
    writeFileSync(join(net, '10.99.7.11'), 'ghost-pod\r\neth0');
    const list = join(dir, 'net.d', 'weft-bridge.conflist');
    const gc = await drive(['gc', '--conflist', list, '--bin-dir', BIN, '--cache-dir', join(dir, 'cache'), '--valid', 'live-pod/eth0']);
    assert.equal(gc.ok, true, JSON.stringify(gc));
    assert.equal(gc.cniVersion, '1.1.0');
    assert.deepEqual(readdirSync(net).filter((f) => f.startsWith('10.')), ['10.99.7.10']);
  });
});
