// The reference bandwidth (Debian's /usr/lib/cni/bandwidth) and ours on the same inputs, on the same
// pod: an accept/refuse agreement table (known differences listed), the same ifb name, and the same
// tbf numbers in the kernel for an accepted config.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner } from '../../../testkit/cni-runner.ts';
import { Topology, nsExec, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, bandwidthConfList, nodeIfbs, nodeQdiscs, runBandwidth } from './helpers.ts';

const REF = '/usr/lib/cni/bandwidth';
const missing = ['bridge', 'host-local', 'bandwidth'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : !existsSync(REF) ? `${REF} missing (containernetworking-plugins)` : false;
const L = { ingressRate: 8_000_000, ingressBurst: 800_000, egressRate: 4_000_000, egressBurst: 400_000 };

interface Case {
  what: string;
  command?: 'ADD' | 'DEL';
  extra: Record<string, unknown>;
  noNetns?: boolean;
  /** Where ours deliberately differs from Debian's reference (1.1.1): why. */
  differs?: string;
}

const CASES: Case[] = [
  { what: 'nothing configured (prevResult passes through)', extra: {} },
  { what: 'ingress and egress limits', extra: L },
  { what: 'ingress only', extra: { ingressRate: 8_000_000, ingressBurst: 800_000 } },
  { what: 'runtimeConfig.bandwidth, kubelet spelling', extra: { runtimeConfig: { bandwidth: L } } },
  { what: 'runtimeConfig.bandwidth, containerd spelling', extra: { runtimeConfig: { bandwidth: { IngressRate: 8_000_000, IngressBurst: 800_000 } } } },
  { what: 'dockershim burst 2^31-1 bits at 1 Mbit/s', extra: { runtimeConfig: { bandwidth: { ingressRate: 1_000_000, ingressBurst: 2147483647 } } } },
  { what: 'containerd burst 2^32-1 bits at 10 Mbit/s, egress too', extra: { runtimeConfig: { bandwidth: { IngressRate: 10_000_000, IngressBurst: 4294967295, EgressRate: 10_000_000, EgressBurst: 4294967295 } } } },
  { what: 'rate without burst', extra: { ingressRate: 1000 } },
  { what: 'burst without rate', extra: { egressBurst: 1000 } },
  { what: 'burst of 4 GB', extra: { ingressRate: 1000, ingressBurst: 8 * 0xffffffff } },
  { what: 'negative rate', extra: { ingressRate: -8, ingressBurst: 8 } },
  { what: 'fractional rate', extra: { ingressRate: 8.5, ingressBurst: 8 } },
  { what: 'rate as a string', extra: { ingressRate: '8000', ingressBurst: 8 } },
  { what: 'no prevResult', extra: { ...L, prevResult: undefined } },
  { what: 'netns missing', extra: L, noNetns: true },
  { what: 'unshapedSubnets', extra: { ...L, unshapedSubnets: ['10.0.0.0/8'] } },
  { what: 'unshapedSubnets and shapedSubnets', extra: { ...L, unshapedSubnets: ['10.0.0.0/8'], shapedSubnets: ['10.1.0.0/16'] }, differs: 'Debian 1.1.1 predates the subnet keys and ignores them; newer references refuse this, as weft does' },
  { what: 'bad subnet', extra: { ...L, unshapedSubnets: ['hello'] }, differs: 'Debian 1.1.1 ignores the key; newer references refuse it, as weft does' },
  { what: 'DEL with a config ADD refuses', command: 'DEL', extra: { ingressRate: 1000 }, differs: 'the reference parses (and refuses) on DEL; weft DEL never blocks cleanup' },
];

describe('bandwidth against the reference plugin on the same inputs', { skip, timeout: 180_000 }, () => {
  let topo: Topology;
  let pod: SimPod;
  let prev: Record<string, unknown>;
  const node = () => topo.nodes[0]?.netns ?? '';
  const stdin = (extra: Record<string, unknown>) => ({ cniVersion: '1.0.0', name: 'bwref', type: 'bandwidth', prevResult: prev, ...extra });
  const run = (bin: string | undefined, c: Case) => runBandwidth(node(), {
    command: c.command ?? 'ADD', stdin: stdin(c.extra), containerId: 'refc', netns: c.noNetns === true ? '/var/run/netns/none-here' : pod.path, ...(bin === undefined ? {} : { bin }),
  });
  const cleanup = async () => {
    await runBandwidth(node(), { command: 'DEL', stdin: stdin(L), containerId: 'refc', netns: pod.path });
    assert.deepEqual(await nodeIfbs(node()), []);
    assert.deepEqual(await nodeQdiscs(node()), []);
  };

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    const conf = bandwidthConfList('bwref', mkdtempSync(join(topo.dir, 'ipam-')), '10.80.0.0/24');
    const plain = new CniRunner({ ...conf, plugins: conf.plugins.filter((p) => p.type === 'bridge') }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    pod = await topo.addPod(n, 1);
    prev = await plain.add({ containerId: 'refc', netns: pod.path, ifName: 'eth0' });
  });
  after(() => topo?.destroySync());

  it('accept/refuse agreement table', async (t) => {
    const rows: string[] = ['| input | reference 1.1.1 | weft | |', '|---|---|---|---|'];
    const disagree: string[] = [];
    for (const c of CASES) {
      const ref = await run(REF, c);
      await cleanup();
      const ours = await run(undefined, c);
      await cleanup();
      const verdict = (r: { code: number | null; json?: Record<string, unknown> | undefined }) => (r.code === 0 ? 'accept' : `refuse (${String(r.json?.['code'] ?? r.code)})`);
      const same = (ref.code === 0) === (ours.code === 0);
      rows.push(`| ${c.what} | ${verdict(ref)} | ${verdict(ours)} | ${same ? 'same' : `differs: ${c.differs ?? 'UNEXPLAINED'}`} |`);
      if (!same && c.differs === undefined) disagree.push(`${c.what}: reference ${ref.stdout.trim()} / weft ${ours.stdout.trim()}`);
      if (same && c.differs !== undefined) disagree.push(`${c.what}: listed as a difference but both ${verdict(ours)}`);
    }
    t.diagnostic(`\n${rows.join('\n')}`);
    assert.deepEqual(disagree, []);
  });

  it('the same ifb name, the same result, and the same tbf numbers in the kernel', async () => {
    const show = async () => {
      const r = await nsExec(node(), ['tc', '-j', 'qdisc', 'show']);
      return (JSON.parse(r.stdout) as Array<{ kind: string; dev: string; handle: string; options?: unknown }>).filter((q) => q.handle !== '0:');
    };
    const ref = await run(REF, { what: '', extra: L });
    assert.equal(ref.code, 0, ref.stdout);
    const refQ = await show();
    const refIfbs = await nodeIfbs(node());
    await cleanup();
    const ours = await run(undefined, { what: '', extra: L });
    assert.equal(ours.code, 0, ours.stdout);
    assert.deepEqual(await nodeIfbs(node()), refIfbs);
    // Go omits empty lists (omitempty) where we print prevResult's as they came.
    const strip = (r: Record<string, unknown> | undefined) => ({
      ...Object.fromEntries(Object.entries(r ?? {}).filter(([, v]) => !(Array.isArray(v) && v.length === 0))),
      interfaces: (r?.['interfaces'] as Array<{ name: string }>).map((i) => i.name),
    });
    assert.deepEqual(strip(ours.json), strip(JSON.parse(ref.stdout) as Record<string, unknown>));
    assert.deepEqual(await show(), refQ);
    await cleanup();
  });
});
