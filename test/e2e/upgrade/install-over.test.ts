// Upgrade in place with the installer (issue 20): the previous release's `weft install` puts bridge +
// host-local + portmap and a conflist into a temp machine root; a pod is added through the installed
// binaries; this build's `weft install` over it replaces binaries and conflist by rename (new inodes,
// no temp files) and leaves the running pod untouched (same pod link, address, host veth, traffic).
// The installed new binaries then CHECK and DEL the old pod and serve a new one, nothing is left, and
// `weft uninstall` brings the machine root back to where it was before the first install.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetns, ipJson, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { diffTrees, dirFlags, hashTree, runCmd } from '../install/helpers.ts';
import { hostVeths } from '../reliability/harness.ts';
import { builds, leftovers, ping, podAddrs } from './helpers.ts';

const NET = 'upginst';
const PLUGINS = ['bridge', 'host-local', 'portmap'];

interface PodLink { ifindex: number; address: string }

/** The pod's eth0 identity (ifindex, MAC). */
async function podLink(pod: string): Promise<PodLink | undefined> {
  const l = await ipJson<Array<PodLink & { ifname: string }>>(pod, ['link', 'show', 'dev', 'eth0']);
  return l[0] === undefined ? undefined : { ifindex: l[0].ifindex, address: l[0].address };
}

describe('upgrade in place: weft install over an older install', rootOnly(), () => {
  let t = '';
  let dataDir = '';
  let node: TestNetns;
  let pods: TestNetns[] = [];
  let bins: { prev: string; next: string };

  before(async () => {
    bins = builds();
    t = mkdtempSync(join(tmpdir(), 'weft-upg-install-'));
    for (const d of ['opt/cni/bin', 'etc/cni/net.d', 'etc/systemd/system', 'usr/local/bin', 'etc/weft', 'var/lib/weft']) mkdirSync(join(t, d), { recursive: true });
    dataDir = join(t, 'var/lib/cni/networks');
    node = await createTestNetns('weft-t-upgi');
    await node.exec(['ip', 'link', 'set', 'lo', 'up']);
    for (let i = 0; i < 2; i++) pods.push(await createTestNetns('weft-t-upgip'));
  });
  after(async () => {
    for (const p of pods) await p.destroy();
    await node.destroy();
    rmSync(t, { recursive: true, force: true });
    pods = [];
  });

  test('pods keep address and connectivity; binaries and conflist replaced by rename; nothing left', async () => {
    const pristine = hashTree(t);
    const install = (binDir: string) => runCmd([join(binDir, 'weft'), 'install', '--backend', 'bridge', '--network', '10.66.0.0/24', '--network-name', NET, '--source', binDir, ...dirFlags(t)]);
    const old = await install(bins.prev);
    assert.equal(old.code, 0, `previous install: ${old.stdout}${old.stderr}`);
    const binDir = join(t, 'opt/cni/bin');
    const conflistPath = join(t, 'etc/cni/net.d/10-weft.conflist');
    // The installed conflist as the runtime reads it, with IPAM files kept inside the temp root.
    const readConf = (): ConfList => {
      const c = JSON.parse(readFileSync(conflistPath, 'utf8')) as ConfList;
      for (const p of c.plugins) if (p['ipam'] !== undefined) p['ipam'] = { ...(p['ipam'] as object), dataDir };
      return c;
    };
    const runner = new CniRunner(readConf(), { binDirs: [binDir], nodeNetns: node.name, timeoutMs: 60_000 });
    const podA = { containerId: `upgi-${process.pid}-a`, netns: pods[0]?.path ?? '', ifName: 'eth0', runtimeConfig: { portMappings: [{ hostPort: 32100, containerPort: 80, protocol: 'tcp' }] } };
    await runner.add(podA);
    const pa = pods[0]?.name ?? '';
    const ipA = (await podAddrs(pa))[0]?.split('/')[0] ?? '';
    assert.ok(await ping(node.name, ipA), 'the old pod answers');
    const before = { addrs: await podAddrs(pa), link: await podLink(pa), veths: await hostVeths(node, podA.containerId, NET) };
    const inodes = new Map([...PLUGINS.map((p) => join(binDir, p)), conflistPath].map((f) => [f, statSync(f).ino]));

    const upd = await install(bins.next);
    assert.equal(upd.code, 0, `this build's install over the previous one: ${upd.stdout}${upd.stderr}`);
    for (const p of PLUGINS) assert.deepEqual(readFileSync(join(binDir, p)), readFileSync(join(bins.next, p)), `${p} is this build's`);
    for (const [f, ino] of inodes) assert.notEqual(statSync(f).ino, ino, `${f} replaced by rename, not rewritten in place`);
    for (const d of [binDir, join(t, 'etc/cni/net.d')]) assert.deepEqual(readdirSync(d).filter((f) => /tmp/i.test(f)), [], `no temp file left in ${d}`);
    assert.deepEqual(readConf().plugins.map((p) => p.type), runner.conf.plugins.map((p) => p.type), 'same chain in the new conflist');
    assert.deepEqual({ addrs: await podAddrs(pa), link: await podLink(pa), veths: await hostVeths(node, podA.containerId, NET) }, before, 'the running pod is untouched');
    assert.ok(await ping(node.name, ipA), 'the old pod still answers after the install');

    // The installed new binaries serve the old pod (CHECK, DEL) and a new one.
    await runner.check(podA);
    const next = new CniRunner(readConf(), { binDirs: [binDir], nodeNetns: node.name, timeoutMs: 60_000 });
    const podB = { containerId: `upgi-${process.pid}-b`, netns: pods[1]?.path ?? '', ifName: 'eth0' };
    await next.add(podB);
    const ipB = (await podAddrs(pods[1]?.name ?? ''))[0]?.split('/')[0] ?? '';
    assert.ok(await ping(pa, ipB), 'old pod to new pod');
    await runner.del(podA);
    await next.del(podB);
    assert.deepEqual(await leftovers(node, NET, dataDir, pods.map((p) => p.name)), []);

    const u = await runCmd([join(bins.next, 'weft'), 'uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, `uninstall: ${u.stdout}${u.stderr}`);
    rmSync(join(t, 'var/lib/cni'), { recursive: true, force: true });
    assert.deepEqual(diffTrees(pristine, hashTree(t)), [], 'uninstall restores the machine root as it was before the first install');
  });
});
