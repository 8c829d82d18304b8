// containerd (Debian's 1.6) over CRI runs podman's default network: the real
// 87-podman-bridge.conflist (bridge + host-local + portmap + firewall, cniVersion 0.4.0) with the
// tuning plugin podman's CNI backend appends (given an mtu, so it has state to save), inside a simulated node: a pod with a hostPort serves
// HTTP to another namespace, and StopPodSandbox + RemovePodSandbox leave nothing (address file, veth,
// portmap and firewall elements, tuning state, libcni's cached result).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ContainerdEnv, uniqueNetworkName, type PodInfo } from '../../../testkit/containerd.ts';
import { Topology, type SimNode } from '../../../testkit/topology.ts';
import { CLEAN, failIfMissing, httpGet, ipJson, leftovers, skipUnlessCi, waitUntil } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLIENT_IP = '192.0.2.200';
const BODY = 'hello from a weft container\n';
/** Where tuning saves what DEL restores (the reference's data dir): `<containerID>_<ifname>.json`. */
const TUNING_DIR = '/run/cni/tuning';

/** The fixture under a unique name, host-local's files in the test's dir, and podman's trailing tuning (with an mtu). */
function conflist(name: string, ipamDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'real-configs', 'podman-87-podman-bridge.conflist'), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) => (p['type'] === 'bridge' ? { ...p, ipam: { ...(p['ipam'] as object), dataDir: ipamDir } } : p));
  return { ...conf, name, plugins: [...plugins, { type: 'tuning', mtu: 1400 }] };
}

describe('containerd (CRI) + podman default network (bridge + portmap + firewall + tuning)', { skip: skipUnlessCi(), timeout: 300_000 }, () => {
  let topo: Topology | undefined;
  let env: ContainerdEnv;
  let node: SimNode;
  let clientNs = '';
  let ipamDir = '';
  let pod: PodInfo | undefined;
  const net = uniqueNetworkName();

  before(async () => {
    failIfMissing();
    topo = await Topology.create({ nodes: 1 });
    clientNs = `/var/run/netns/${(await topo.addUnderlayHost('cl', CLIENT_IP)).netns}`;
    const n = topo.nodes[0];
    assert.ok(n);
    node = n;
    ipamDir = join(topo.dir, 'ipam');
    env = await ContainerdEnv.start({ netns: node.netns, conflist: conflist(net, ipamDir) });
  });

  after(async () => {
    await env?.destroy();
    topo?.destroySync();
  });

  const tuningStates = (id: string): string[] => (existsSync(TUNING_DIR) ? readdirSync(TUNING_DIR).filter((f) => f.startsWith(`${id}_`)) : []);

  test('RunPodSandbox with a hostPort: busybox httpd answers through it from another namespace', async () => {
    const spec = { name: 'web', ports: [{ hostPort: 8080, containerPort: 80 }] };
    const id = await env.runPod(spec);
    await env.startContainer(id, spec, 'httpd', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
    pod = await env.inspectPod(id);
    assert.match(pod.ip, /^10\.88\.\d+\.\d+$/);
    const url = `http://${node.ip}:8080/`;
    await waitUntil(`${url} from the client namespace`, async () => (await httpGet(clientNs, url)) === BODY);
    const during = await leftovers(env, node.netns, join(ipamDir, net));
    assert.deepEqual(during.addressFiles, [pod.ip]);
    assert.equal(during.veths.length, 1);
    assert.ok(during.nftElements.some((e) => e.includes('8080')), `a portmap element for 8080: ${during.nftElements.join('; ')}`);
    const fw = during.nftElements.filter((e) => e.startsWith('fw-pods'));
    assert.equal(fw.length, 1, `one firewall element: ${during.nftElements.join('; ')}`);
    assert.ok(fw[0]?.includes(pod.ip));
    assert.deepEqual(tuningStates(pod.id), [`${pod.id}_eth0.json`], 'tuning saved what DEL restores');
    assert.equal((await ipJson<Array<{ mtu: number }>>(pod.netnsPath, ['link', 'show', 'eth0']))[0]?.mtu, 1400);
  });

  test('StopPodSandbox and RemovePodSandbox leave nothing: address, veth, portmap/firewall elements, tuning state, cached result', async () => {
    assert.ok(pod, 'the previous test started the pod');
    await env.removePod(pod.id);
    const left = await leftovers(env, node.netns, join(ipamDir, net));
    // fw-isolated*/fw-same* hold the firewall's per-network policy, not a pod's (like bridge-nets*).
    assert.deepEqual({ ...left, nftElements: left.nftElements.filter((e) => !/^fw-(isolated|same)/.test(e)) }, CLEAN);
    assert.deepEqual(tuningStates(pod.id), []);
    assert.deepEqual(await env.podIds(), []);
    assert.equal(await httpGet(clientNs, `http://${node.ip}:8080/`), undefined, 'the hostPort no longer answers');
  });
});
