// podman (libcni) runs weft's bridge + host-local + portmap conflist inside a simulated node, as
// `weft install --backend bridge` puts it on a machine (plugins and conflist written by the real
// installer into podman's CNI dirs): address and default route, gateway reachable, -p 8080:80 from
// another namespace, 10 containers at once with distinct addresses, nothing left after `podman rm -f`,
// and `weft install --uninstall` empties the dirs again. Run twice: with the bundles, and with the
// standalone executable (`weft install --standalone`: one file, plugins hard-linked to it), the
// latter on the first two cases and the uninstall only, to keep the run short.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_IPAM_DIR, loudSkip, PodmanEnv, podmanSkipReason, spawnCollect, uniqueNetworkName } from '../../../testkit/podman.ts';
import { nsExec, Topology } from '../../../testkit/topology.ts';
import { nsJson, podElements, waitUntil } from './helpers.ts';

const SUBNET = '10.88.0.0/24';
const GATEWAY = '10.88.0.1';
const CLIENT_IP = '192.0.2.200';
const WEFT = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin', 'weft');
const SEA_WEFT = join(import.meta.dirname, '..', '..', '..', 'dist', 'sea', 'weft');

const reason = await podmanSkipReason();

for (const standalone of [false, true]) describe(`podman + bridge/host-local/portmap${standalone ? ' (standalone executable)' : ''}`, { skip: reason !== undefined ? loudSkip(reason) : false, timeout: 300_000 }, () => {
  /** Cases run only with the bundles (the standalone run keeps to the first two and the uninstall). */
  const full = (name: string, fn: () => Promise<void>): void => {
    test(name, { skip: standalone ? 'run with the bundles only' : false }, fn);
  };
  let topo: Topology;
  let env: PodmanEnv;
  let client: { netns: string; ip: string };
  const net = uniqueNetworkName();
  const ipamDir = DEFAULT_IPAM_DIR;
  let installFlags: string[] = [];

  before(async () => {
    assert.ok(existsSync(WEFT) && (!standalone || existsSync(SEA_WEFT)), 'dist/bin/weft (and dist/sea/weft) missing: run npm run build');
    topo = await Topology.create({ nodes: 1 });
    client = await topo.addUnderlayHost('cl', CLIENT_IP);
    const node = topo.nodes[0];
    assert.ok(node);
    env = new PodmanEnv({ netns: node.netns, binDir: null });
    env.trackNetwork(net);
    const d = (s: string): string => join(env.dir, s);
    installFlags = ['--bin-dir', env.binDir, '--conf-dir', env.confDir, '--state-dir', d('weft-install'),
      '--unit-dir', d('unit'), '--agent-dir', d('sbin'), '--weft-conf-dir', d('weft')];
    const mode = standalone ? ['--standalone', SEA_WEFT] : [];
    const r = await spawnCollect([WEFT, 'install', ...mode, '--backend', 'bridge', '--network', SUBNET, '--network-name', net, ...installFlags], process.env, 60_000);
    assert.equal(r.code, 0, `weft install: ${r.stderr}`);
  });

  after(async () => {
    await env?.destroy();
    topo?.destroySync();
  });

  const nodeNs = (): string => topo.nodes[0]?.netns ?? '';
  const addressFiles = (): string[] =>
    existsSync(join(ipamDir, net)) ? readdirSync(join(ipamDir, net)).filter((f) => /^[0-9.]+$/.test(f)) : [];

  test('a container gets its address and default route and reaches its gateway', async () => {
    const id = await env.run('c1', net, ['/bin/sleep', '600']);
    const { ip, prefixLen, gateway } = await env.containerIp('c1', net);
    assert.match(ip, /^10\.88\.0\.\d+$/);
    assert.equal(prefixLen, 24);
    assert.equal(gateway, GATEWAY);
    // Kernel state inside the container's own namespace, read from outside through its sandbox.
    const sandbox = (await env.inspect('c1')).NetworkSettings?.SandboxKey ?? '';
    const addrs = await nsJson<Array<{ ifname: string; addr_info: Array<{ local: string; prefixlen: number }> }>>(sandbox, ['-4', 'addr', 'show', 'eth0']);
    assert.deepEqual(addrs[0]?.addr_info.map((a) => `${a.local}/${a.prefixlen}`), [`${ip}/24`]);
    const routes = await nsJson<Array<{ dst: string; gateway?: string }>>(sandbox, ['-4', 'route', 'show', 'default']);
    assert.deepEqual(routes.map((r) => r.gateway), [GATEWAY]);
    const ping = await env.podman(['exec', 'c1', 'ping', '-c', '1', '-W', '2', GATEWAY]);
    assert.equal(ping.code, 0, `ping gateway from c1: ${ping.stdout}${ping.stderr}`);
    // host-local's file for the address names the container (reference layout: "<id>\r\n<ifname>").
    assert.equal(readFileSync(join(ipamDir, net, ip), 'utf8'), `${id}\r\neth0`);
    assert.deepEqual(env.cachedResults(), [`${net}-${id}-eth0`]);
    await env.rm(['c1']);
  });

  test('-p 8080:80 reaches busybox httpd in the container from another namespace', async () => {
    const node = topo.nodes[0];
    assert.ok(node);
    await env.run('web', net, ['/bin/httpd', '-f', '-p', '80', '-h', '/www'], ['-p', '8080:80']);
    const url = `http://${node.ip}:8080/`;
    let last = '';
    await waitUntil(`${url} from ${client.netns}`, async () => {
      // No `-T`: busybox 1.35's wget crashes (SIGSEGV) with it; nsExec's timeout bounds the attempt.
      const r = await nsExec(client.netns, ['busybox', 'wget', '-qO-', url], { timeoutMs: 5000 });
      last = `${r.code}: ${r.stdout}${r.stderr}`;
      return r.code === 0 && r.stdout.includes('hello from a weft container');
    }, 15_000).catch((e: unknown) => assert.fail(`${String(e)}; last attempt ${last}`));
    // The DNAT element is keyed by the container ID (our portmap's comment), one per mapping.
    const { ip } = await env.containerIp('web', net);
    const dnat = (await podElements(nodeNs())).filter((e) => e.set === 'portmap-dnat4');
    assert.equal(dnat.length, 1, JSON.stringify(dnat));
    assert.match(JSON.stringify(dnat[0]?.elem), new RegExp(ip.replaceAll('.', '\\.')));
    await env.rm(['web']);
  });

  full('podman stop releases the address (DEL from the cached result), start takes one again', async () => {
    const id = await env.run('cycle', net, ['/bin/sleep', '600']);
    const first = (await env.containerIp('cycle', net)).ip;
    assert.deepEqual(addressFiles(), [first]);
    await env.must(['stop', '-t', '0', 'cycle']);
    assert.deepEqual(addressFiles(), []);
    assert.deepEqual((await podElements(nodeNs())).filter((e) => e.set.startsWith('bridge-pods4')), []);
    assert.deepEqual(env.cachedResults(), []);
    await env.must(['start', 'cycle']);
    const second = (await env.containerIp('cycle', net)).ip;
    assert.deepEqual(addressFiles(), [second]);
    assert.deepEqual(env.cachedResults(), [`${net}-${id}-eth0`]);
    const ping = await env.podman(['exec', 'cycle', 'ping', '-c', '1', '-W', '2', GATEWAY]);
    assert.equal(ping.code, 0, `ping after restart: ${ping.stdout}${ping.stderr}`);
    await env.rm(['cycle']);
    assert.deepEqual(addressFiles(), []);
  });

  full('10 containers started at once get 10 distinct addresses', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `many${i}`);
    await Promise.all(names.map((n) => env.run(n, net, ['/bin/sleep', '600'])));
    const ips = await Promise.all(names.map(async (n) => (await env.containerIp(n, net)).ip));
    assert.equal(new Set(ips).size, 10, `addresses: ${ips.join(' ')}`);
    for (const ip of ips) assert.match(ip, /^10\.88\.0\.\d+$/);
    assert.deepEqual(addressFiles().sort(), [...ips].sort());
    // One veth per container on the bridge, each pod's address in the masquerade set.
    const ports = await nsJson<unknown[]>(`/var/run/netns/${nodeNs()}`, ['link', 'show', 'master', 'cni0']);
    assert.equal(ports.length, 10);
    const pods = (await podElements(nodeNs())).filter((e) => e.set.startsWith('bridge-pods4'));
    assert.equal(pods.length, 10, JSON.stringify(pods));
    // Every container reaches the gateway.
    const pings = await Promise.all(names.map((n) => env.podman(['exec', n, 'ping', '-c', '1', '-W', '2', GATEWAY])));
    assert.deepEqual(pings.map((p) => p.code), names.map(() => 0));
  });

  full('after podman rm -f no address file, veth, ruleset element or cached result is left', async () => {
    const before = await env.must(['ps', '-a', '--format', '{{.Names}}']);
    assert.ok(before.trim().split('\n').length >= 10, `containers before rm: ${before}`);
    await env.must(['rm', '-f', '-t', '0', '--all']);
    assert.deepEqual(addressFiles(), []);
    const ports = await nsJson<unknown[]>(`/var/run/netns/${nodeNs()}`, ['link', 'show', 'master', 'cni0']);
    assert.equal(ports.length, 0, JSON.stringify(ports));
    const veths = await nsJson<Array<{ ifname: string }>>(`/var/run/netns/${nodeNs()}`, ['link', 'show', 'type', 'veth']);
    assert.deepEqual(veths.map((l) => l.ifname), ['eth0'], 'only the node uplink is a veth');
    const left = (await podElements(nodeNs())).filter((e) => !/^bridge-(nets|exempt)[46]-/.test(e.set));
    assert.deepEqual(left, []);
    assert.deepEqual(env.cachedResults(), []);
  });

  test('weft install --uninstall leaves podman\'s CNI dirs empty again', async () => {
    const r = await spawnCollect([WEFT, 'install', '--uninstall', ...installFlags], process.env, 60_000);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(env.binDir), []);
    // podman's own lock file for its network config dir is podman's, not the installer's.
    assert.deepEqual(readdirSync(env.confDir).filter((f) => f !== 'cni.lock'), []);
    assert.ok(!existsSync(join(env.dir, 'weft-install')));
  });
});
