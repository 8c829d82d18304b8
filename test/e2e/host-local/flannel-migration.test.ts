// A node that ran kube-flannel, then weft: kube-flannel's on-disk state is made by the real thing
// (flannel's CNI plugin, built by scripts/flannel-cni-setup.sh, in front of the reference bridge and
// host-local, on kube-flannel's own conflist: records under /var/lib/cni/networks/cbr0, here a temp
// data dir), then weft's `flannel` conflist runs on the same node under another network name and
// under the name it keeps by default. No address a flannel pod holds is handed out again: host-local
// skips addresses held under another network name (the reference does not: shown here too). Driven
// by containerd 2's libcni (the harness); everything inside namespaces of this test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { netnsFixture, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { ROOT, drive, libcniHarness, type HarnessOut } from '../containerd/libcni-harness.ts';
import { run } from '../../../testkit/exec.ts';

const FLANNEL_CNI = '/var/cache/weft/go-bin/flannel-cni-v0.9.1/flannel';
const REFERENCE = '/usr/lib/cni';
const SUBNET_ENV = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.9.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

type ConfList = { name: string; plugins: Array<Record<string, unknown>> };

void describe('kube-flannel, then weft on the same node: no address handed out twice', { ...rootOnly(), timeout: 300_000 }, () => {
  const nets = netnsFixture('weft-mig');
  const t = mkdtempSync(join(tmpdir(), 'weft-migration-'));
  const ipam = join(t, 'networks');
  let harness = '';
  let node: TestNetns;
  let flannelPods: string[] = [];
  after(() => rmSync(t, { recursive: true, force: true }));

  /** The conflist `base` with the node's paths, written to `<t>/<tag>.conflist`. */
  function conflist(base: ConfList, tag: string, name: string): string {
    const plugins = base.plugins.map((p) => (p['type'] === 'flannel' ? { ...p, subnetFile: join(t, 'subnet.env'), dataDir: join(t, 'flannel'), ipam: { dataDir: ipam } } : p));
    const file = join(t, `${tag}.conflist`);
    writeFileSync(file, JSON.stringify({ ...base, name, plugins }));
    return file;
  }

  async function addPods(list: string, bin: string, tag: string, count: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const pod = await nets.create();
      const r: HarnessOut = await drive(node, harness, ['add', '--conflist', list, '--bin-dir', bin, '--cache-dir', join(t, 'cache'), '--netns', pod.path, '--id', `${tag}-${i}`]);
      assert.equal(r.ok, true, `${tag} ADD ${i}: ${JSON.stringify(r)}`);
      const addr = r.result?.ips?.[0]?.address.split('/')[0];
      assert.ok(addr !== undefined, JSON.stringify(r));
      out.push(addr);
    }
    return out;
  }

  const held = (network: string): string[] => (existsSync(join(ipam, network)) ? readdirSync(join(ipam, network)).filter((f) => f.startsWith('10.')).sort() : []);

  before(async () => {
    assert.ok(existsSync(FLANNEL_CNI), `${FLANNEL_CNI} is missing: run scripts/flannel-cni-setup.sh`);
    assert.ok(existsSync(join(ROOT, 'dist', 'bin', 'flannel')), 'dist/bin/flannel is missing: run npm run build');
    harness = await libcniHarness();
    node = await nets.create();
    writeFileSync(join(t, 'subnet.env'), SUBNET_ENV);
    // kube-flannel's node: flannel's own plugin, the reference bridge, host-local and portmap.
    const refBin = join(t, 'ref-bin');
    mkdirSync(refBin);
    symlinkSync(FLANNEL_CNI, join(refBin, 'flannel'));
    for (const p of ['bridge', 'host-local', 'portmap', 'loopback']) symlinkSync(join(REFERENCE, p), join(refBin, p));
    const kube = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'real-configs', 'kube-flannel.conflist'), 'utf8')) as ConfList;
    flannelPods = await addPods(conflist(kube, 'kube-flannel', kube.name), refBin, 'flannel', 3);
    assert.deepEqual(held('cbr0'), [...flannelPods].sort(), "kube-flannel's records under cbr0");
  });

  it('weft under another network name skips what the flannel pods hold; a requested one is refused', async () => {
    const weft = JSON.parse(readFileSync(join(ROOT, 'conf', '10-flannel.conflist'), 'utf8')) as ConfList;
    const list = conflist(weft, 'weft-renamed', 'weft');
    const got = await addPods(list, join(ROOT, 'dist', 'bin'), 'weft', 3);
    assert.deepEqual(got.filter((a) => flannelPods.includes(a)), [], `weft handed out ${got.join(' ')}; flannel pods hold ${flannelPods.join(' ')}`);
    assert.deepEqual(held('weft'), [...got].sort());
    assert.deepEqual(held('cbr0'), [...flannelPods].sort(), 'cbr0 untouched');
    // The reference host-local, on the same data dir under a third name, hands out a held address.
    const r = await run([join(REFERENCE, 'host-local')], {
      env: { PATH: process.env['PATH'], CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'ref-1', CNI_IFNAME: 'eth0', CNI_NETNS: '/run/netns/none', CNI_PATH: REFERENCE },
      input: JSON.stringify({ cniVersion: '0.3.1', name: 'third', type: 'bridge', ipam: { type: 'host-local', dataDir: ipam, ranges: [[{ subnet: '10.244.9.0/24' }]] } }),
    });
    assert.equal(r.code, 0, r.stdout);
    assert.ok(flannelPods.includes((JSON.parse(r.stdout) as { ips: Array<{ address: string }> }).ips[0]?.address.split('/')[0] ?? ''), `reference: ${r.stdout}`);
  });

  it("weft's default conflist keeps cbr0: it allocates on in kube-flannel's own records", async () => {
    const weft = JSON.parse(readFileSync(join(ROOT, 'conf', '10-flannel.conflist'), 'utf8')) as ConfList;
    assert.equal(weft.name, 'cbr0');
    const got = await addPods(conflist(weft, 'weft-default', weft.name), join(ROOT, 'dist', 'bin'), 'weft-cbr0', 2);
    for (const a of got) assert.ok(!flannelPods.includes(a) && !held('weft').includes(a) && !held('third').includes(a), `${a} is held elsewhere`);
    assert.deepEqual(held('cbr0'), [...flannelPods, ...got].sort());
  });
});
