// The built portmap chained after the built flannel-vxlan (conf/weft-vxlan.conflist) on a simulated
// two-node cluster with weftd: prevResult passes through unchanged, CHECK passes on a healthy pod, the
// hostPort answers from the other node (another host) and the rule count does not grow with pods.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../testkit/cluster.ts';
import { CniRunner } from '../../../testkit/cni-runner.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, fetchFrom, fetchUntil, portmapElements, ruleCount, runPortmap, serveHttp } from './helpers.ts';

const missing = ['flannel-vxlan', 'bridge', 'host-local', 'weftd', 'portmap'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;

describe('portmap chained after flannel-vxlan (two nodes, weftd, built binaries)', { skip, timeout: 180_000 }, () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, portmap: true });
  });
  after(() => cluster?.destroy());

  it("portmap prints flannel-vxlan's result unchanged; CHECK passes; the other node reaches the hostPort", async () => {
    const [n1, n2] = cluster.nodes;
    assert.ok(n1 && n2);
    const flannelOnly = new CniRunner({ ...n1.runner.conf, plugins: n1.runner.conf.plugins.filter((p) => p.type !== 'portmap') }, n1.runner.opts);
    const pod = await cluster.topo.addPod(n1, 1);
    serveHttp(cluster.topo, pod.netns, 'pod-1');
    const mappings = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
    const prev = await flannelOnly.add({ containerId: 'fl-1', netns: pod.path, ifName: 'eth0' });
    const add = await runPortmap(n1.netns, { command: 'ADD', conf: n1.runner.conf, containerId: 'fl-1', netns: pod.path, prevResult: prev, portMappings: mappings });
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.deepEqual(add.json, prev);
    const check = await runPortmap(n1.netns, { command: 'CHECK', conf: n1.runner.conf, containerId: 'fl-1', netns: pod.path, prevResult: add.json, portMappings: mappings });
    assert.equal(check.code, 0, check.stdout);
    assert.equal(await fetchUntil(n2.netns, n1.ip, 8080, 'pod-1'), 'pod-1', 'node 2 -> node 1 address : hostPort');
    assert.equal(await fetchFrom(n1.netns, '127.0.0.1', 8080), 'pod-1');
    assert.equal(await fetchFrom(pod.netns, n1.ip, 8080), 'pod-1', 'hairpin');
    const del = await runPortmap(n1.netns, { command: 'DEL', conf: n1.runner.conf, containerId: 'fl-1', netns: '' });
    assert.equal(del.code, 0, del.stdout);
    await flannelOnly.del({ containerId: 'fl-1', netns: pod.path, ifName: 'eth0' });
    assert.equal(await fetchFrom(n2.netns, n1.ip, 8080), '');
  });

  it('the whole conflist (flannel-vxlan + portmap) per pod: CHECK passes, rules constant over 5 pods, DEL leaves nothing', async () => {
    const n1 = cluster.nodes[0];
    assert.ok(n1);
    const counts: number[] = [];
    const pods = [];
    for (let i = 2; i <= 6; i++) {
      const pod = await cluster.topo.addPod(n1, i);
      const a = { containerId: `fl-${i}`, netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: [{ hostPort: 9000 + i, containerPort: 80 }, { hostPort: 9100 + i, containerPort: 53, protocol: 'udp' }] } };
      const res = await n1.runner.add(a);
      assert.match(JSON.stringify(res['ips']), /10\.244\./);
      await n1.runner.check(a);
      counts.push(await ruleCount(n1.netns));
      pods.push(a);
    }
    assert.equal(new Set(counts).size, 1, `rules after each pod: ${counts.join(', ')}`);
    for (const a of pods) await n1.runner.del(a);
    assert.deepEqual(await portmapElements(n1.netns), []);
  });
});
