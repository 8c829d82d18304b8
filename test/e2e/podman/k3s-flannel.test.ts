// podman (libcni) runs k3s's 10-flannel.conflist (flannel + portmap + bandwidth, the real fixture
// with only the per-node paths substituted) on two simulated nodes, each with its own weftd (vxlan,
// file lease store): containers on different nodes reach each other, `-p` serves another namespace,
// and `podman rm -f` leaves nothing (address files, stored delegates, veths, nft elements, cached results).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { loudSkip, PodmanEnv, podmanSkipReason, uniqueNetworkName } from '../../../testkit/podman.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { nsJson, podElements, waitUntil } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLIENT_IP = '192.0.2.200';
const reason = await podmanSkipReason();

interface NodeEnv {
  node: ClusterNode;
  env: PodmanEnv;
  ipamDir: string;
  flannelDir: string;
}

/** k3s's conflist with what k3s/a runtime sets per node: the subnet file and data dirs (nodes share one machine). */
function nodeConflist(name: string, n: ClusterNode, ipamDir: string, flannelDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'real-configs', 'k3s-10-flannel.conflist'), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) => (p['type'] === 'flannel' ? { ...p, subnetFile: n.subnetFile, dataDir: flannelDir, ipam: { dataDir: ipamDir } } : p));
  return { ...conf, name, plugins };
}

const files = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

describe('podman + k3s flannel conflist (flannel + portmap + bandwidth) with weftd on two nodes', { skip: reason !== undefined ? loudSkip(reason) : false, timeout: 300_000 }, () => {
  let cluster: Cluster | undefined;
  let clientNs = '';
  const envs: NodeEnv[] = [];
  const net = uniqueNetworkName();

  before(async () => {
    cluster = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, conflist: 'flannel' });
    clientNs = (await cluster.topo.addUnderlayHost('cl', CLIENT_IP)).netns;
    for (const node of cluster.nodes) {
      const env = new PodmanEnv({ netns: node.netns });
      const ipamDir = join(env.dir, 'ipam');
      const flannelDir = join(env.dir, 'flannel');
      env.addNetwork(nodeConflist(net, node, ipamDir, flannelDir));
      envs.push({ node, env, ipamDir, flannelDir });
    }
  });

  after(async () => {
    for (const e of envs) await e.env.destroy();
    cluster?.destroy();
  });

  test('containers on two nodes reach each other across the overlay, and -p 8080:80 answers on each node', async () => {
    const [a, b] = envs;
    assert.ok(a && b);
    await Promise.all(envs.map((e) => e.env.run('web', net, ['/bin/httpd', '-f', '-p', '80', '-h', '/www'], ['-p', '8080:80'])));
    const ipA = (await a.env.containerIp('web', net)).ip;
    const ipB = (await b.env.containerIp('web', net)).ip;
    assert.notEqual(a.node.subnet, b.node.subnet);
    // What the removal test expects gone: the address file and the stored delegate are where it looks.
    for (const [e, ip] of [[a, ipA], [b, ipB]] as const) {
      assert.deepEqual(files(join(e.ipamDir, net)).filter((f) => /^[0-9.]+$/.test(f)), [ip]);
      assert.equal(files(e.flannelDir).length, 1);
    }
    for (const [from, to] of [[a, ipB], [b, ipA]] as const) {
      const r = await from.env.podman(['exec', 'web', 'wget', '-qO-', `http://${to}/`]);
      assert.equal(r.stdout, 'hello from a weft container\n', `wget ${to} from the container on ${from.node.netns}: ${r.stderr}`);
    }
    for (const e of envs) {
      const url = `http://${e.node.ip}:8080/`;
      let last = '';
      await waitUntil(`${url} from ${clientNs}`, async () => {
        const r = await nsExec(clientNs, ['busybox', 'wget', '-qO-', url], { timeoutMs: 5000 });
        last = `${r.code}: ${r.stdout}${r.stderr}`;
        return r.code === 0 && r.stdout.includes('hello from a weft container');
      }, 15_000).catch((err: unknown) => assert.fail(`${String(err)}; last attempt ${last}`));
      assert.ok((await podElements(e.node.netns)).some((el) => JSON.stringify(el.elem).includes('8080')), 'a portmap element for 8080');
    }
  });

  test('after podman rm -f nothing is left on either node', async () => {
    // Both nodes' podman share the machine's libcni cache and the network name: remove both first.
    await Promise.all(envs.map((e) => e.env.rm(['web'])));
    for (const e of envs) {
      const veths = await nsJson<Array<{ ifname: string }>>(`/var/run/netns/${e.node.netns}`, ['link', 'show', 'type', 'veth']);
      const elements = (await podElements(e.node.netns)).filter((el) => !/^bridge-(nets|exempt)[46]-/.test(el.set));
      assert.deepEqual({
        addressFiles: files(join(e.ipamDir, net)).filter((f) => /^[0-9.]+$/.test(f)),
        delegates: files(e.flannelDir),
        veths: veths.map((l) => l.ifname).filter((n) => n !== 'eth0'),
        elements,
        cachedResults: e.env.cachedResults(),
      }, { addressFiles: [], delegates: [], veths: [], elements: [], cachedResults: [] }, `leftovers on ${e.node.netns}`);
    }
  });
});
