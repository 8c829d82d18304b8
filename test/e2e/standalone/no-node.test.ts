// The standalone executable needs no Node.js: every executable of a standalone bin dir (dist/sea/weft
// hard-linked under each name) runs inside a mount namespace where every node binary is an empty,
// non-executable file and PATH holds system dirs only: VERSION of every plugin, a real
// ADD/CHECK/DEL of loopback and bridge + host-local (in-process) + portmap in namespaces, and a
// 2-node vxlan cluster (file store) whose weftd and plugins all run there, pods pinging each other.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pluginNames } from '../../../cli/install/plan.ts';
import { Cluster } from '../../../testkit/cluster.ts';
import { CniRunner, execPlugin, type ConfList } from '../../../testkit/cni-runner.ts';
import { canPing } from '../../../testkit/probe.ts';
import { nsExec, Topology } from '../../../testkit/topology.ts';
import { runCmd } from '../install/helpers.ts';
import { noNodeWrapper, standaloneBinDir, standaloneSkipReason } from '../../../testkit/standalone.ts';

const skip = standaloneSkipReason();

void describe('standalone executable where no Node.js exists', { skip, timeout: 240_000 }, () => {
  let work: string;
  let bin: { dir: string; remove: () => void };
  let wrap: string[];
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'weft-sa-e2e-'));
    bin = standaloneBinDir();
    wrap = noNodeWrapper(work);
  });
  after(() => {
    bin.remove();
    rmSync(work, { recursive: true, force: true });
  });

  it('node is not runnable under the wrapper (and is outside it)', async () => {
    const outside = await runCmd([process.execPath, '-e', 'process.stdout.write("ran")']);
    assert.equal(outside.stdout, 'ran', 'the probe itself works where node exists');
    const r = await runCmd([...wrap, 'sh', '-c', 'command -v node; node -e "process.stdout.write(1+1+\\"\\")"; /usr/bin/node -e 0; echo "rc=$?"; echo "path=$PATH"']);
    assert.doesNotMatch(r.stdout, /^2$/m, 'node ran');
    assert.match(r.stdout, /^rc=126$/m, '/usr/bin/node cannot be executed');
    assert.match(r.stdout, /^path=\/usr\/sbin:\/usr\/bin:\/sbin:\/bin$/m);
    assert.doesNotMatch(r.stdout, /node$/m, 'command -v finds no node');
  });

  it('every plugin answers VERSION; weftd and weft start', async () => {
    for (const name of pluginNames()) {
      const r = await runCmd([...wrap, join(bin.dir, name)], { CNI_COMMAND: 'VERSION' });
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.ok((JSON.parse(r.stdout) as { supportedVersions: string[] }).supportedVersions.includes('1.0.0'), name);
      // Without CNI_COMMAND a plugin names itself on stderr: the hard link ran the right one.
      const about = await runCmd([...wrap, join(bin.dir, name)], {});
      assert.match(about.stderr, new RegExp(`^${name} `), `${name} runs as itself`);
    }
    // A symlink runs as the name it has, too.
    const links = mkdtempSync(join(work, 'links-'));
    symlinkSync(join(bin.dir, 'weft'), join(links, 'portmap'));
    assert.match((await runCmd([...wrap, join(links, 'portmap')], {})).stderr, /^portmap /);
    const d = await runCmd([...wrap, join(bin.dir, 'weftd'), '--version']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^weftd \d+\.\d+\.\d+/);
    const w = await runCmd([...wrap, join(bin.dir, 'weft'), 'install', '--help']);
    assert.equal(w.code, 0, w.stderr);
    assert.match(w.stdout, /--standalone/);
    // `weft <plugin>` runs the plugin too.
    const viaWeft = await runCmd([...wrap, join(bin.dir, 'weft'), 'loopback'], { CNI_COMMAND: 'VERSION' });
    assert.equal(viaWeft.code, 0, viaWeft.stderr);
  });

  it('ADD, CHECK and DEL of loopback and bridge + host-local + portmap in namespaces', async () => {
    const topo = await Topology.create({ nodes: 1 });
    try {
      const node = topo.nodes[0];
      assert.ok(node);
      const pod = await topo.addPod(node, 1);
      const opts = { binDirs: [bin.dir], nodeNetns: node.netns, wrap, env: { WEFT_LOG: 'debug' } };
      const lo = new CniRunner({ cniVersion: '1.0.0', name: 'lo', plugins: [{ type: 'loopback' }] }, opts);
      const conf: ConfList = {
        cniVersion: '1.0.0',
        name: 'sa-net',
        plugins: [
          { type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', dataDir: join(node.dir, 'ipam'), ranges: [[{ subnet: '10.47.0.0/24' }]] } },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      };
      const net = new CniRunner(conf, opts);
      const att = { containerId: 'sa-1', netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: [{ hostPort: 18080, containerPort: 80, protocol: 'tcp' }] } };
      const loAtt = { containerId: 'sa-1', netns: pod.path, ifName: 'lo' };
      await lo.add(loAtt);
      const res = await net.add(att);
      const ips = res['ips'] as Array<{ address: string }>;
      assert.equal(ips[0]?.address, '10.47.0.2/24');
      assert.ok(await canPing(node.netns, '10.47.0.2'), 'node reaches the pod');
      assert.equal((await nsExec(pod.netns, ['ping', '-c1', '-W1', '127.0.0.1'])).code, 0, 'lo is up');
      const nft = await nsExec(node.netns, ['nft', 'list', 'table', 'inet', 'weft']);
      assert.match(nft.stdout, /18080/, 'the portmap element is there');
      // host-local ran inside the bridge process: found on CNI_PATH as the same file.
      const bridgeCheck = await execPlugin(join(bin.dir, 'bridge'), { CNI_COMMAND: 'CHECK', CNI_CONTAINERID: 'sa-1', CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: bin.dir },
        JSON.stringify({ ...conf.plugins[0], name: conf.name, cniVersion: conf.cniVersion, prevResult: res }), opts);
      assert.equal(bridgeCheck.code, 0, bridgeCheck.stdout);
      assert.match(bridgeCheck.stderr, /delegating in-process/);
      await net.check(att);
      await lo.check(loAtt);
      await net.del(att);
      await lo.del(loAtt);
      assert.equal((await nsExec(pod.netns, ['ip', 'link', 'show', 'eth0'])).code, 1, 'eth0 is gone');
      assert.doesNotMatch((await nsExec(node.netns, ['nft', 'list', 'table', 'inet', 'weft'])).stdout, /18080/);
      assert.deepEqual(readDirSafe(join(node.dir, 'ipam', 'sa-net')).filter((f) => /^10\./.test(f)), [], 'the address is released');
    } finally {
      topo.destroySync();
    }
  });

  it('a 2-node vxlan cluster (file store): weftd and every plugin from the standalone bin dir, pods reach each other', async () => {
    const c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 1, binDir: bin.dir, wrap });
    try {
      const [a, b] = c.pods;
      assert.ok(a && b && a.node !== b.node);
      assert.ok(await canPing(a.netns, b.ip), `${a.name} -> ${b.name} (${b.ip})`);
      assert.ok(await canPing(b.netns, a.ip), `${b.name} -> ${a.name} (${a.ip})`);
      for (const n of c.nodes) {
        const cmdline = readFileSync(`/proc/${String(n.weftd?.pid)}/cmdline`, 'utf8').split('\0');
        assert.equal(cmdline[0], join(bin.dir, 'weftd'), 'weftd runs from the standalone bin dir');
      }
    } finally {
      c.destroy();
    }
  });
});

function readDirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
