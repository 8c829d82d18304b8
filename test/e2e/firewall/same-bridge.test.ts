// ingressPolicy same-bridge and isolated with the built bridge + firewall chain: two isolated bridges
// cannot reach each other, each reaches the outside, pods of one same-bridge bridge reach each other,
// pods of an `isolated` bridge do not (br_netfilter on), and a network with the open policy (not
// isolated) still reaches an isolated one, on a node whose FORWARD drops.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { canPing } from '../../../testkit/probe.ts';
import { Topology, nsRun, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR } from './helpers.ts';

const missing = ['bridge', 'host-local', 'firewall'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;

function podIp(res: Record<string, unknown>): string {
  return ((res['ips'] as Array<{ address: string }>)[0]?.address ?? '').split('/')[0] ?? '';
}

describe('firewall ingressPolicy same-bridge and isolated (built binaries)', { skip, timeout: 120_000 }, () => {
  let topo: Topology;
  let client: { netns: string; ip: string };
  const pods: Record<string, { pod: SimPod; ip: string }> = {};

  before(async () => {
    topo = await Topology.create({ nodes: 1, prefix: 'wfwi' });
    client = await topo.addUnderlayHost('cl', '192.0.2.200');
    const n = topo.nodes[0];
    assert.ok(n);
    await nsRun(n.netns, ['iptables', '-P', 'FORWARD', 'DROP']);
    // Bridged pod-to-pod traffic reaches the forward hook only through br_netfilter.
    await nsRun(n.netns, ['sysctl', '-qw', 'net.bridge.bridge-nf-call-iptables=1']);
    const net = (name: string, bridge: string, subnet: string, ingressPolicy: string): CniRunner => {
      const dataDir = mkdtempSync(join(topo.dir, `ipam-${name}-`));
      const conf: ConfList = {
        cniVersion: '1.0.0',
        name,
        plugins: [
          { type: 'bridge', bridge, isGateway: true, isDefaultGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir } },
          { type: 'firewall', backend: 'iptables', ingressPolicy },
        ],
      };
      return new CniRunner(conf, { binDirs: [BIN_DIR], nodeNetns: n.netns });
    };
    const nets = { a: net('isola', 'fwbra', '10.89.2.0/24', 'same-bridge'), b: net('isolb', 'fwbrb', '10.89.3.0/24', 'same-bridge'), c: net('openc', 'fwbrc', '10.89.4.0/24', 'open'), d: net('isold', 'fwbrd', '10.89.5.0/24', 'isolated') };
    let i = 1;
    for (const [name, runner] of [['a1', nets.a], ['a2', nets.a], ['b1', nets.b], ['c1', nets.c], ['d1', nets.d], ['d2', nets.d]] as const) {
      const pod = await topo.addPod(n, i++);
      const res = await runner.add({ containerId: `ctr-${name}`, netns: pod.path, ifName: 'eth0' });
      await runner.check({ containerId: `ctr-${name}`, netns: pod.path, ifName: 'eth0' });
      pods[name] = { pod, ip: podIp(res) };
    }
  });
  after(() => topo?.destroySync());

  const ping = (from: string, to: string) => canPing(pods[from]?.pod.netns ?? '', pods[to]?.ip ?? '', 1, 2);

  it('two isolated bridges cannot reach each other, either way', async () => {
    assert.equal(await ping('a1', 'b1'), false);
    assert.equal(await ping('b1', 'a1'), false);
  });

  it('each isolated bridge reaches the outside', async () => {
    assert.equal(await canPing(pods['a1']?.pod.netns ?? '', client.ip), true);
    assert.equal(await canPing(pods['b1']?.pod.netns ?? '', client.ip), true);
  });

  it('pods of the same isolated bridge reach each other', async () => {
    assert.equal(await ping('a1', 'a2'), true);
  });

  it('a network with the open policy is not isolated: it reaches an isolated bridge', async () => {
    assert.equal(await ping('c1', 'a1'), true);
  });

  it('isolated: pods of the same bridge cannot reach each other; the bridge is cut off from other isolated ones and reaches the outside', async () => {
    assert.equal(await ping('d1', 'd2'), false);
    assert.equal(await ping('d1', 'a1'), false);
    assert.equal(await ping('a1', 'd1'), false);
    assert.equal(await canPing(pods['d1']?.pod.netns ?? '', client.ip), true);
  });
});
