// containerd (Debian's 1.6) driven over CRI by crictl, as kubelet drives it, runs weft's bridge +
// host-local + portmap conflist inside a simulated node: a pod with a hostPort serves HTTP to another
// namespace, StopPodSandbox + RemovePodSandbox leave nothing, five sandboxes at once get distinct
// addresses, a pod survives containerd being SIGKILLed and restarted, and a conflist edited into one
// that ADD refuses never blocks a running pod's StopPodSandbox (libcni stops DEL at the first failing plugin).
// Run twice: with the bundles, and with containerd's bin_dir a standalone bin dir (dist/sea/weft
// hard-linked under each name), the latter on the first two cases only, to keep the run short.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ContainerdEnv, uniqueNetworkName, type PodInfo } from '../../../testkit/containerd.ts';
import { Topology, type SimNode } from '../../../testkit/topology.ts';
import { standaloneBinDir, standaloneSkipReason } from '../../../testkit/standalone.ts';
import { CLEAN, failIfMissing, httpGet, leftovers, skipUnlessCi, waitUntil } from './helpers.ts';

const CLIENT_IP = '192.0.2.200';
const BODY = 'hello from a weft container\n';

/** The conflist a kubelet node with bridge networking carries (capabilities as containerd reads them). */
function conflist(name: string, ipamDir: string): { name: string } & Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name,
    plugins: [
      {
        type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: ipamDir },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

for (const standalone of [false, true]) describe(`containerd (CRI) + bridge/host-local/portmap${standalone ? ' (standalone executable)' : ''}`, { skip: skipUnlessCi() || (standalone && standaloneSkipReason()), timeout: 600_000 }, () => {
  /** Cases run only with the bundles (the standalone run keeps to the first two). */
  const full = (name: string, fn: () => Promise<void>): void => {
    test(name, { skip: standalone ? 'run with the bundles only' : false }, fn);
  };
  let bin: ReturnType<typeof standaloneBinDir> | undefined;
  let topo: Topology | undefined;
  let env: ContainerdEnv;
  let node: SimNode;
  let clientNs = '';
  let ipamDir = '';
  const net = uniqueNetworkName();

  before(async () => {
    failIfMissing();
    topo = await Topology.create({ nodes: 1 });
    clientNs = `/var/run/netns/${(await topo.addUnderlayHost('cl', CLIENT_IP)).netns}`;
    const n = topo.nodes[0];
    assert.ok(n);
    node = n;
    ipamDir = join(topo.dir, 'ipam');
    bin = standalone ? standaloneBinDir() : undefined;
    env = await ContainerdEnv.start({ netns: node.netns, conflist: conflist(net, ipamDir), ...(bin ? { binDir: bin.dir } : {}) });
  });

  after(async () => {
    await env?.destroy();
    topo?.destroySync();
    bin?.remove();
  });

  const nodeLeftovers = (): ReturnType<typeof leftovers> => leftovers(env, node.netns, join(ipamDir, net));

  /** RunPodSandbox with hostPort -> 80, then busybox httpd in it. */
  async function startWeb(name: string, hostPort: number): Promise<PodInfo> {
    const spec = { name, ports: [{ hostPort, containerPort: 80 }] };
    const id = await env.runPod(spec);
    await env.startContainer(id, spec, 'httpd', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
    return env.inspectPod(id);
  }

  /** Waits until the node's hostPort answers with the container's page from the client namespace. */
  async function waitServed(hostPort: number): Promise<void> {
    const url = `http://${node.ip}:${hostPort}/`;
    await waitUntil(`${url} from the client namespace`, async () => (await httpGet(clientNs, url)) === BODY);
  }

  let web: PodInfo | undefined;

  test('RunPodSandbox with a hostPort: busybox httpd answers through it from another namespace', async () => {
    web = await startWeb('web', 8080);
    assert.equal(web.state, 'SANDBOX_READY');
    assert.match(web.ip, /^10\.88\.0\.\d+$/);
    // host-local's file names the sandbox (reference layout), libcni cached the result under it.
    assert.equal(readFileSync(join(ipamDir, net, web.ip), 'utf8'), `${web.id}\r\neth0`);
    assert.deepEqual(env.cachedResults(), [`${net}-${web.id}-eth0`]);
    await waitServed(8080);
    const elems = await nodeLeftovers();
    assert.ok(elems.nftElements.some((e) => e.includes('8080')), `a portmap element for 8080: ${elems.nftElements.join('; ')}`);
    assert.equal(elems.veths.length, 1);
  });

  test('StopPodSandbox and RemovePodSandbox leave nothing on the node', async () => {
    assert.ok(web, 'the previous test started the pod');
    await env.removePod(web.id);
    assert.deepEqual(await nodeLeftovers(), CLEAN);
    assert.deepEqual(await env.podIds(), []);
    assert.equal(await httpGet(clientNs, `http://${node.ip}:8080/`), undefined, 'the hostPort no longer answers');
  });

  full('five sandboxes started at once get distinct addresses, and leave nothing once removed', async () => {
    const specs = [1, 2, 3, 4, 5].map((i) => ({ name: `many${i}`, ports: [{ hostPort: 8100 + i, containerPort: 80 }] }));
    const ids = await Promise.all(specs.map((s) => env.runPod(s)));
    const pods = await Promise.all(ids.map((id) => env.inspectPod(id)));
    const ips = pods.map((p) => p.ip);
    for (const ip of ips) assert.match(ip, /^10\.88\.0\.\d+$/);
    assert.equal(new Set(ips).size, 5, `distinct addresses: ${ips.join(', ')}`);
    const during = await nodeLeftovers();
    assert.deepEqual([...during.addressFiles].sort(), [...ips].sort());
    assert.equal(during.veths.length, 5);
    assert.equal(during.cachedResults.length, 5);
    await Promise.all(ids.map((id) => env.removePod(id)));
    assert.deepEqual(await nodeLeftovers(), CLEAN);
  });

  full('containerd SIGKILLed and restarted while a pod runs: the pod keeps its address and traffic, and is cleaned afterwards', async () => {
    const pod = await startWeb('survivor', 8090);
    await waitServed(8090);
    await env.killDaemon();
    // The shim and the pod outlive the daemon; the data path needs no runtime.
    await waitServed(8090);
    await env.startDaemon();
    const again = await env.inspectPod(pod.id);
    assert.deepEqual({ state: again.state, ip: again.ip, netnsPath: again.netnsPath }, { state: 'SANDBOX_READY', ip: pod.ip, netnsPath: pod.netnsPath });
    assert.deepEqual((await nodeLeftovers()).addressFiles, [pod.ip], 'no second address was taken on restart');
    await waitServed(8090);
    await env.removePod(pod.id);
    assert.deepEqual(await nodeLeftovers(), CLEAN);
  });

  full('the conflist edited into one ADD refuses while a pod runs: StopPodSandbox still releases everything', async () => {
    const pod = await startWeb('edited', 8095);
    await waitServed(8095);
    // The reference refuses markMasqBit together with externalSetMarkChain, on ADD only.
    const bad = conflist(net, ipamDir);
    const plugins = bad['plugins'] as Array<Record<string, unknown>>;
    plugins[1] = { ...plugins[1], markMasqBit: 14, externalSetMarkChain: 'KUBE-MARK-MASQ' };
    env.writeConflist(bad);
    try {
      await waitUntil('containerd to load the edited conflist', async () => (await env.crictl(['info'], 10_000)).stdout.includes('KUBE-MARK-MASQ'));
      const refused = await env.tryRunPod({ name: 'refused', ports: [{ hostPort: 8096, containerPort: 80 }] });
      assert.notEqual(refused.code, 0, 'ADD refuses the edited conflist');
      assert.match(refused.stderr, /markMasqBit/);
      await env.removePod(pod.id);
      assert.deepEqual(await nodeLeftovers(), CLEAN);
      assert.deepEqual(await env.podIds(), [], 'the refused sandbox was cleaned by containerd too');
    } finally {
      env.writeConflist(conflist(net, ipamDir));
    }
  });
});
