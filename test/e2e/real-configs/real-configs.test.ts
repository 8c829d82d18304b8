// Every CNI configuration of test/fixtures/real-configs run as its runtime would, through the
// libcni-style runner and the built binaries, inside a node namespace of its own: ADD with a hostPort
// (in the runtime's casing), the pod reaches its gateway, CHECK (0.4.0+, as libcni), DEL, and then
// nothing of the pod is left on the node (address files, veth, nft elements, stored flannel delegate).
// The only edits are paths, so that runs never share files with the machine or each other.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CniRunner, PluginFailure, type ConfList } from '../../../testkit/cni-runner.ts';
import { nsExec, nsRun, Topology, type SimNode } from '../../../testkit/topology.ts';
import { portmapElements } from '../portmap/helpers.ts';
import { FIXTURES, loadConfList, portMappings, type Fixture } from './fixtures.ts';

const BIN_DIR = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
/** subnet.env as flanneld writes it with --ip-masq (kube-flannel, kubespray) for the node's 10.244.1.0/24 lease. */
const SUBNET_ENV = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync(join(BIN_DIR, 'flannel'))) return 'dist/bin missing: run npm run build';
  return false;
}

/** Points every path a plugin would write at the node's private dir (the runtime leaves them at their defaults). */
function withNodePaths(conf: ConfList, dir: string): ConfList {
  const plugins = conf.plugins.map((p) => {
    const q: Record<string, unknown> = { ...p };
    const ipam = q['ipam'] as Record<string, unknown> | undefined;
    if (p.type === 'flannel') {
      Object.assign(q, { subnetFile: join(dir, 'subnet.env'), dataDir: join(dir, 'flannel'), ipam: { ...ipam, dataDir: join(dir, 'ipam') } });
    } else if (ipam?.['type'] === 'host-local') {
      q['ipam'] = { ...ipam, dataDir: join(dir, 'ipam') };
    }
    return q as ConfList['plugins'][number];
  });
  return { ...conf, plugins };
}

function versionAtLeast(v: string, min: string): boolean {
  const p = (s: string): number[] => (s === '' ? [0, 1, 0] : s.split('.').map(Number));
  const [a, b] = [p(v), p(min)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** The first IPv4 gateway of a result, 1.0.0/0.3.x (`ips`) or 0.1.0/0.2.0 (`ip4`) shaped. */
function ipv4Of(res: Record<string, unknown>): { ip: string; gw?: string } | undefined {
  const ips = res['ips'] as Array<{ address: string; gateway?: string }> | undefined;
  const v4 = ips?.find((i) => !i.address.includes(':'));
  if (v4) return { ip: v4.address.split('/')[0] as string, ...(v4.gateway !== undefined ? { gw: v4.gateway } : {}) };
  const ip4 = res['ip4'] as { ip: string; gateway?: string } | undefined;
  return ip4 ? { ip: ip4.ip.split('/')[0] as string, ...(ip4.gateway !== undefined ? { gw: ip4.gateway } : {}) } : undefined;
}

/** Host-side traces of pods: veths, host-local address files, portmap elements, stored delegates. */
async function nodeTraces(n: SimNode): Promise<Record<string, unknown>> {
  const veths = (await nsRun(n.netns, ['ip', '-o', 'link', 'show', 'type', 'veth'])).split('\n').filter((l) => l.trim() !== '' && !/ eth0@/.test(l));
  const ipam = join(n.dir, 'ipam');
  const files = existsSync(ipam) ? readdirSync(ipam, { recursive: true, encoding: 'utf8' }).filter((f) => /[0-9a-f]+[.:][0-9a-f.:]+$/.test(f) && !f.includes('last_reserved')) : [];
  const stored = existsSync(join(n.dir, 'flannel')) ? readdirSync(join(n.dir, 'flannel')) : [];
  return { veths, files, elements: await portmapElements(n.netns), stored };
}

const missing = (conf: ConfList): string[] => conf.plugins.map((p) => p.type).filter((t) => !existsSync(join(BIN_DIR, t)));

void describe('real configuration files', { skip: skipReason(), timeout: 300_000 }, () => {
  let topo: Topology;
  before(async () => { topo = await Topology.create({ nodes: FIXTURES.length, prefix: `wrc${process.pid % 10000}` }); });
  after(() => topo?.destroySync());

  FIXTURES.forEach((f: Fixture, i) => {
    const shipped = loadConfList(f.file);
    const blocker = f.blocker;
    if (f.pending !== undefined && blocker !== undefined && 'missingPlugins' in blocker) {
      it(`${f.file} (${f.runtime}): pending, ${f.pending}`, () => {
        assert.deepEqual(missing(shipped), blocker.missingPlugins, `${f.file}: the missing plugins changed: run it and update "pending"`);
      });
      return;
    }
    if (f.pending !== undefined && blocker !== undefined && 'refusedKey' in blocker) {
      it(`${f.file} (${f.runtime}): pending, ${f.pending}`, async () => {
        const n = topo.nodes[i] as SimNode;
        const runner = new CniRunner(withNodePaths(shipped, n.dir), { binDirs: [BIN_DIR], nodeNetns: n.netns });
        const pod = await topo.addPod(n, 1);
        await assert.rejects(runner.add({ containerId: `${topo.prefix}-rc${i}`, netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: portMappings(f.casing) } }),
          (e: unknown) => e instanceof PluginFailure && e.cniCode === 2 && e.message.includes(blocker.refusedKey),
          `${f.file}: ADD no longer refuses ${blocker.refusedKey}: drop "pending" so that the whole run is checked`);
      });
      return;
    }
    it(`${f.file} (${f.runtime}): ADD with a hostPort, gateway reachable, CHECK, DEL leaves nothing`, async () => {
      const n = topo.nodes[i] as SimNode;
      mkdirSync(n.dir, { recursive: true });
      writeFileSync(join(n.dir, 'subnet.env'), SUBNET_ENV);
      const conf = withNodePaths(shipped, n.dir);
      assert.deepEqual(missing(conf), [], 'every plugin type is a weft executable');
      const runner = new CniRunner(conf, { binDirs: [BIN_DIR], nodeNetns: n.netns });
      const clean = await nodeTraces(n);
      const pod = await topo.addPod(n, 1);
      const att = { containerId: `${topo.prefix}-rc${i}`, netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: portMappings(f.casing) } };
      const res = await runner.add(att);
      const isLoopback = conf.plugins.every((p) => p.type === 'loopback');
      if (!isLoopback) {
        const v4 = ipv4Of(res);
        assert.ok(v4?.gw, `an IPv4 address with a gateway in ${JSON.stringify(res)}`);
        const ping = await nsExec(pod.netns, ['ping', '-c', '1', '-W', '2', '-n', '-q', v4.gw]);
        assert.equal(ping.code, 0, `pod ${v4.ip} reaches its gateway ${v4.gw}: ${ping.stdout}${ping.stderr}`);
        if (conf.plugins.some((p) => p.type === 'portmap')) assert.ok((await portmapElements(n.netns)).length > 0, 'the hostPort is mapped');
        assert.notDeepEqual(await nodeTraces(n), clean, 'ADD left its traces (so the check after DEL means something)');
      } else {
        assert.match(await nsRun(pod.netns, ['ip', '-o', 'link', 'show', 'lo']), /UP|UNKNOWN/);
      }
      if (versionAtLeast(conf.cniVersion, '0.4.0')) await runner.check(att);
      await runner.del(att);
      assert.deepEqual(await nodeTraces(n), clean, 'nothing of the pod is left on the node');
      const ip = isLoopback ? undefined : ipv4Of(res)?.ip;
      if (ip !== undefined) {
        // Any table (masquerade, portmap, firewall sets): no element names the pod's address any more.
        assert.doesNotMatch(await nsRun(n.netns, ['nft', 'list', 'ruleset']), new RegExp(`(^|[^0-9.])${ip.replaceAll('.', '\\.')}([^0-9]|$)`, 'm'));
      }
    });
  });
});
