// kube-flannel's conflist with weft's `flannel` in front of the reference Go plugins (Debian's
// containernetworking-plugins in /usr/lib/cni: bridge, host-local, portmap): the rendered delegate is
// exec'd from CNI_PATH, and the Go bridge and host-local accept it as they accept flannel's own
// rendering. ADD with a containerd-style hostPort, gateway reachable, DEL leaves no veth, no address.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { nsExec, nsRun, Topology, type SimNode } from '../../../testkit/topology.ts';
import { loadConfList, portMappings } from './fixtures.ts';

const BIN_DIR = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
const REF_DIR = '/usr/lib/cni';

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync(join(BIN_DIR, 'flannel'))) return 'dist/bin missing: run npm run build';
  if (!existsSync(join(REF_DIR, 'bridge'))) return 'reference plugins missing: apt-get install containernetworking-plugins';
  return false;
}

void describe('weft flannel delegating to the reference Go plugins', { skip: skipReason(), timeout: 60_000 }, () => {
  let topo: Topology;
  before(async () => { topo = await Topology.create({ nodes: 1, prefix: `wrf${process.pid % 10000}` }); });
  after(() => topo?.destroySync());

  it('kube-flannel.conflist: ADD, gateway, DEL; the Go bridge reads what weft rendered', async () => {
    const n = topo.nodes[0] as SimNode;
    const bin = join(n.dir, 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(BIN_DIR, 'flannel'), join(bin, 'flannel'));
    for (const p of ['bridge', 'host-local', 'portmap']) symlinkSync(join(REF_DIR, p), join(bin, p));
    writeFileSync(join(n.dir, 'subnet.env'), 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
    const shipped = loadConfList('kube-flannel.conflist');
    const conf: ConfList = { ...shipped, plugins: shipped.plugins.map((p) => p.type !== 'flannel' ? p
      : { ...p, subnetFile: join(n.dir, 'subnet.env'), dataDir: join(n.dir, 'flannel'), ipam: { dataDir: join(n.dir, 'ipam') } }) };
    const runner = new CniRunner(conf, { binDirs: [bin], nodeNetns: n.netns });
    const pod = await topo.addPod(n, 1);
    const att = { containerId: `${topo.prefix}-ref`, netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: portMappings('containerd') } };
    const res = await runner.add(att);
    const ip = (res['ips'] as Array<{ address: string; gateway: string }>)[0];
    assert.ok(ip !== undefined && ip.address.startsWith('10.244.7.'), JSON.stringify(res));
    assert.equal((await nsExec(pod.netns, ['ping', '-c', '1', '-W', '2', '-n', '-q', ip.gateway])).code, 0, 'gateway reachable');
    const stored = JSON.parse(readFileSync(join(n.dir, 'flannel', att.containerId), 'utf8')) as Record<string, unknown>;
    assert.equal(stored['mtu'], 1450);
    assert.match(await nsRun(n.netns, ['ip', 'link', 'show', 'cni0']), /mtu 1450/, 'the Go bridge applied the rendered mtu');
    await runner.del(att);
    assert.equal((await nsRun(n.netns, ['ip', '-o', 'link', 'show', 'type', 'veth'])).split('\n').filter((l) => l !== '' && !/ eth0@/.test(l)).length, 0);
    assert.deepEqual(readdirSync(join(n.dir, 'ipam', 'cbr0')).filter((f) => /^[0-9.]+$/.test(f)), []);
    assert.equal(existsSync(join(n.dir, 'flannel', att.containerId)), false);
  });
});
