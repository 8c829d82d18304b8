// The built portmap chained after the built bridge + host-local in a conflist run by the libcni-style
// runner, inside a simulated node: prevResult passes through unchanged, CHECK passes on a healthy pod,
// the hostPort answers from another host, the node and the pod itself, a conflict is code 120, DEL cleans.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner, PluginFailure, type ConfList } from '../../../testkit/cni-runner.ts';
import { Topology, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, fetchFrom, fetchUntil, portmapElements, runPortmap, serveHttp } from './helpers.ts';

const missing = ['bridge', 'host-local', 'portmap'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;
const WEB = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];

describe('portmap chained after bridge (built binaries, libcni-style runner)', { skip, timeout: 120_000 }, () => {
  let topo: Topology;
  let client: { netns: string; ip: string };
  let conf: ConfList;
  let chain: CniRunner;
  let bridgeOnly: CniRunner;
  let podA: SimPod;
  let podB: SimPod;
  const node = () => topo.nodes[0]?.netns ?? '';
  const nodeIp = () => topo.nodes[0]?.ip ?? '';

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    client = await topo.addUnderlayHost('cl', '192.0.2.200');
    const dataDir = mkdtempSync(join(topo.dir, 'ipam-'));
    conf = {
      cniVersion: '1.0.0',
      name: 'pmnet',
      plugins: [
        { type: 'bridge', bridge: 'cni0', isGateway: true, isDefaultGateway: true, ipMasq: true, hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/24' }]], dataDir } },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    };
    chain = new CniRunner(conf, { binDirs: [BIN_DIR], nodeNetns: node() });
    bridgeOnly = new CniRunner({ ...conf, plugins: conf.plugins.filter((p) => p.type !== 'portmap') }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    podA = await topo.addPod(n, 1);
    podB = await topo.addPod(n, 2);
    serveHttp(topo, podA.netns, 'pod-a');
    serveHttp(topo, podB.netns, 'pod-b');
  });
  after(() => topo?.destroySync());

  it("portmap prints bridge's result unchanged (real mappings, not just an empty list)", async () => {
    const bridgeResult = await bridgeOnly.add({ containerId: 'ctr-a', netns: podA.path, ifName: 'eth0' });
    const run = await runPortmap(node(), { command: 'ADD', conf, containerId: 'ctr-a', netns: podA.path, prevResult: bridgeResult, portMappings: WEB });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(run.json, bridgeResult);
    const check = await runPortmap(node(), { command: 'CHECK', conf, containerId: 'ctr-a', netns: podA.path, prevResult: run.json, portMappings: WEB });
    assert.equal(check.code, 0, check.stdout);
    assert.equal(await fetchUntil(client.netns, nodeIp(), 8080, 'pod-a'), 'pod-a');
  });

  it('a second container asking for the same hostPort gets code 120 and changes nothing', async () => {
    const before = JSON.stringify(await portmapElements(node()));
    await assert.rejects(
      chain.add({ containerId: 'ctr-b', netns: podB.path, ifName: 'eth0', runtimeConfig: { portMappings: WEB } }),
      (e: unknown) => e instanceof PluginFailure && e.plugin === 'portmap' && e.cniCode === 120 && e.run.stdout.includes('ctr-a'),
    );
    assert.equal(JSON.stringify(await portmapElements(node())), before);
    assert.equal(await fetchFrom(client.netns, nodeIp(), 8080), 'pod-a');
  });

  it('the full chain: ADD, CHECK passes on the healthy pod, reachable from client, node, 127.0.0.1 and itself', async () => {
    const mappings = [{ hostPort: 9090, containerPort: 80, protocol: 'tcp' }];
    const res = await chain.add({ containerId: 'ctr-b', netns: podB.path, ifName: 'eth0', runtimeConfig: { portMappings: mappings } });
    const ip = (res['ips'] as Array<{ address: string }>)[0]?.address ?? '';
    assert.match(ip, /^10\.88\.0\.\d+\/24$/);
    await chain.check({ containerId: 'ctr-b', netns: podB.path, ifName: 'eth0', runtimeConfig: { portMappings: mappings } });
    assert.equal(await fetchUntil(client.netns, nodeIp(), 9090, 'pod-b'), 'pod-b');
    assert.equal(await fetchFrom(node(), nodeIp(), 9090), 'pod-b');
    assert.equal(await fetchFrom(node(), '127.0.0.1', 9090), 'pod-b');
    assert.equal(await fetchFrom(podB.netns, nodeIp(), 9090), 'pod-b', 'hairpin');
    assert.equal(await fetchFrom(podA.netns, nodeIp(), 9090), 'pod-b', 'another pod on the bridge');
  });

  it('DEL through the chain, and a bare DEL (no netns, no prevResult), leave nothing of either pod', async () => {
    await chain.del({ containerId: 'ctr-b', netns: podB.path, ifName: 'eth0', runtimeConfig: { portMappings: [{ hostPort: 9090, containerPort: 80 }] } });
    const bare = await runPortmap(node(), { command: 'DEL', conf, containerId: 'ctr-a', netns: '' });
    assert.equal(bare.code, 0, bare.stdout);
    await bridgeOnly.del({ containerId: 'ctr-a', netns: podA.path, ifName: 'eth0' });
    assert.deepEqual(await portmapElements(node()), []);
    assert.equal(await fetchFrom(client.netns, nodeIp(), 8080), '');
    assert.equal(await fetchFrom(client.netns, nodeIp(), 9090), '');
    assert.equal(await fetchFrom(node(), '127.0.0.1', 8080), '');
  });
});
