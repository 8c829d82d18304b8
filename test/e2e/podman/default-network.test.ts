// podman (libcni) runs its own default network as its CNI backend writes it (87-podman-bridge.conflist:
// bridge cni-podman0 + portmap + firewall + tuning, cniVersion 0.4.0) with weft's binaries, inside a
// simulated node: -p reaches the container; with FORWARD DROP (iptables-nft) the container still
// reaches the outside through firewall; a tuning key reaches the container; `podman rm -f` leaves
// no address file, set element, tuning state or cached result behind.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_IPAM_DIR, loudSkip, PodmanEnv, podmanSkipReason, uniqueNetworkName } from '../../../testkit/podman.ts';
import { nsExec, nsRun, Topology } from '../../../testkit/topology.ts';
import { nsJson, podElements, waitUntil } from './helpers.ts';

const CLIENT_IP = '192.0.2.200';
const reason = await podmanSkipReason();

/** The default network podman's CNI backend writes (containers/common libnetwork/cni), under a unique name. */
function podmanDefaultConflist(name: string): { name: string } & Record<string, unknown> {
  return {
    cniVersion: '0.4.0',
    name,
    plugins: [
      {
        type: 'bridge', bridge: 'cni-podman0', isGateway: true, ipMasq: true, hairpinMode: true,
        ipam: { type: 'host-local', routes: [{ dst: '0.0.0.0/0' }], ranges: [[{ subnet: '10.88.0.0/16', gateway: '10.88.0.1' }]] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'firewall' },
      { type: 'tuning' },
    ],
  };
}

describe('podman default network (bridge + portmap + firewall + tuning)', { skip: reason !== undefined ? loudSkip(reason) : false, timeout: 300_000 }, () => {
  let topo: Topology;
  let env: PodmanEnv;
  let client: { netns: string; ip: string };
  const net = uniqueNetworkName('weftpd');
  const tunedNet = `${net}-t`;
  const nodeNs = (): string => topo.nodes[0]?.netns ?? '';
  const fwElements = async () => (await podElements(nodeNs())).filter((e) => e.set.startsWith('fw-pods'));
  const addressFiles = (n: string): string[] => (existsSync(join(DEFAULT_IPAM_DIR, n)) ? readdirSync(join(DEFAULT_IPAM_DIR, n)).filter((f) => /^[0-9.]+$/.test(f)) : []);
  const ids: string[] = [];

  before(async () => {
    topo = await Topology.create({ nodes: 1, prefix: 'wpdn' });
    client = await topo.addUnderlayHost('cl', CLIENT_IP);
    const node = topo.nodes[0];
    assert.ok(node);
    env = new PodmanEnv({ netns: node.netns });
    env.addNetwork(podmanDefaultConflist(net));
    // The same chain with a tuning key on another bridge and subnet.
    const tuned = podmanDefaultConflist(tunedNet);
    const plugins = tuned['plugins'] as Array<Record<string, unknown>>;
    plugins[0] = { ...plugins[0], bridge: 'cni-podman1', ipam: { type: 'host-local', routes: [{ dst: '0.0.0.0/0' }], ranges: [[{ subnet: '10.89.0.0/24', gateway: '10.89.0.1' }]] } };
    plugins[3] = { type: 'tuning', sysctl: { 'net.ipv4.conf.IFNAME.arp_notify': '1' }, mtu: 1400 };
    env.addNetwork(tuned);
  });

  after(async () => {
    await env?.destroy();
    topo?.destroySync();
  });

  test('-p 8080:80 reaches busybox httpd in the container from another namespace', async () => {
    const node = topo.nodes[0];
    assert.ok(node);
    ids.push((await env.run('web', net, ['/bin/httpd', '-f', '-p', '80', '-h', '/www'], ['-p', '8080:80'])).trim());
    const url = `http://${node.ip}:8080/`;
    let last = '';
    await waitUntil(`${url} from ${client.netns}`, async () => {
      const r = await nsExec(client.netns, ['busybox', 'wget', '-qO-', url], { timeoutMs: 5000 });
      last = `${r.code}: ${r.stdout}${r.stderr}`;
      return r.code === 0 && r.stdout.includes('hello from a weft container');
    }, 15_000).catch((e: unknown) => assert.fail(`${String(e)}; last attempt ${last}`));
    const { ip } = await env.containerIp('web', net);
    assert.equal((await fwElements()).length, 1);
    assert.match(JSON.stringify(await fwElements()), new RegExp(ip.replaceAll('.', '\\.')));
  });

  test('with FORWARD DROP on the node, the container still reaches the outside (firewall)', async () => {
    await nsRun(nodeNs(), ['iptables', '-P', 'FORWARD', 'DROP']);
    ids.push((await env.run('out', net, ['/bin/sleep', '600'])).trim());
    const ping = await env.podman(['exec', 'out', 'ping', '-c', '1', '-W', '2', CLIENT_IP]);
    assert.equal(ping.code, 0, `ping ${CLIENT_IP}: ${ping.stdout}${ping.stderr}`);
    assert.equal((await fwElements()).length, 2);
  });

  test('tuning in the chain sets the pod interface (mtu, sysctl)', async () => {
    const id = (await env.run('tuned', tunedNet, ['/bin/sleep', '600'])).trim();
    ids.push(id);
    // What DEL will restore, saved under the reference's data dir and file name.
    assert.ok(existsSync(join('/run/cni/tuning', `${id}_eth0.json`)));
    const sandbox = (await env.inspect('tuned')).NetworkSettings?.SandboxKey ?? '';
    const links = await nsJson<Array<{ mtu: number }>>(sandbox, ['link', 'show', 'eth0']);
    assert.equal(links[0]?.mtu, 1400);
    const sys = await env.podman(['exec', 'tuned', 'cat', '/proc/sys/net/ipv4/conf/eth0/arp_notify']);
    assert.equal(sys.stdout.trim(), '1');
  });

  test('after podman rm -f nothing is left: addresses, firewall elements, tuning state, cached results', async () => {
    await env.must(['rm', '-f', '-t', '0', '--all']);
    assert.deepEqual(addressFiles(net), []);
    assert.deepEqual(addressFiles(tunedNet), []);
    assert.deepEqual(await fwElements(), []);
    const left = (await podElements(nodeNs())).filter((e) => !e.set.startsWith('bridge-nets') && !e.set.startsWith('fw-isolated') && !e.set.startsWith('fw-same'));
    assert.deepEqual(left, []);
    const tuningDir = '/run/cni/tuning';
    const states = existsSync(tuningDir) ? readdirSync(tuningDir).filter((f) => ids.some((id) => f.startsWith(`${id}_`))) : [];
    assert.deepEqual(states, []);
    assert.deepEqual(env.cachedResults(), []);
    const veths = await nsJson<Array<{ ifname: string }>>(`/var/run/netns/${nodeNs()}`, ['link', 'show', 'type', 'veth']);
    assert.deepEqual(veths.map((l) => l.ifname), ['eth0'], 'only the node uplink is a veth');
  });
});
