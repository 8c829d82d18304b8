// The built bandwidth run directly after a bridge ADD, as a runtime would: refusals change nothing,
// CHECK notices a missing ifb (code 131), DEL is forgiving (second DEL, no netns, no prevResult, a
// config its own ADD would refuse), GC removes exactly the unlisted attachments' ifbs.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner } from '../../../testkit/cni-runner.ts';
import { Topology, nsRun, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, bandwidthConfList, nodeIfbs, nodeQdiscs, runBandwidth } from './helpers.ts';

const missing = ['bridge', 'host-local', 'bandwidth'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;
const LIMITS = { ingressRate: 8_000_000, ingressBurst: 800_000, egressRate: 4_000_000, egressBurst: 400_000 };

describe('bandwidth verbs after a bridge ADD (built binaries)', { skip, timeout: 120_000 }, () => {
  let topo: Topology;
  let plain: CniRunner;
  const pods: SimPod[] = [];
  const prev: Array<Record<string, unknown>> = [];
  const node = () => topo.nodes[0]?.netns ?? '';
  const stdin = (i: number, extra: Record<string, unknown> = {}) => ({ cniVersion: '1.1.0', name: 'bwlife', type: 'bandwidth', ...LIMITS, prevResult: prev[i], ...extra });
  const add = (i: number, extra: Record<string, unknown> = {}) => runBandwidth(node(), { command: 'ADD', stdin: stdin(i, extra), containerId: `c${i}`, netns: pods[i]?.path ?? '' });

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    const conf = bandwidthConfList('bwlife', mkdtempSync(join(topo.dir, 'ipam-')), '10.78.0.0/24');
    plain = new CniRunner({ ...conf, cniVersion: '1.1.0', plugins: conf.plugins.filter((p) => p.type === 'bridge') }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    for (let i = 0; i < 4; i++) {
      const pod = await topo.addPod(n, i + 1);
      pods.push(pod);
      prev.push(await plain.add({ containerId: `c${i}`, netns: pod.path, ifName: 'eth0' }));
    }
  });
  after(() => topo?.destroySync());

  it('refused configs (burst without rate, both subnet lists, no prevResult, no netns) change nothing', async () => {
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ ingressRate: 0 }, 'if burst is set, rate must also be set', 7],
      [{ unshapedSubnets: ['10.0.0.0/8'], shapedSubnets: ['10.1.0.0/16'] }, 'cannot be both specified', 7],
      [{ prevResult: undefined }, 'must be called as chained plugin', 7],
    ];
    for (const [extra, msg, code] of cases) {
      const r = await add(0, extra);
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.json?.['code'], code, r.stdout);
      assert.match(String(r.json?.['msg']), new RegExp(msg));
    }
    const gone = await runBandwidth(node(), { command: 'ADD', stdin: stdin(0), containerId: 'c0', netns: '/var/run/netns/does-not-exist' });
    assert.equal(gone.json?.['code'], 3, gone.stdout);
    assert.deepEqual(await nodeQdiscs(node()), []);
    assert.deepEqual(await nodeIfbs(node()), []);
  });

  it('ADD twice replaces the first one (a retried ADD), CHECK passes, then fails with 131 once the ifb is gone', async () => {
    assert.equal((await add(0)).code, 0);
    const r = await add(0);
    assert.equal(r.code, 0, r.stdout);
    assert.equal((await nodeIfbs(node())).length, 1);
    assert.deepEqual((await nodeQdiscs(node())).map((q) => q.kind).sort(), ['ingress', 'tbf', 'tbf']);
    const check = () => runBandwidth(node(), { command: 'CHECK', stdin: stdin(0, { prevResult: r.json }), containerId: 'c0', netns: pods[0]?.path ?? '' });
    assert.equal((await check()).code, 0, (await check()).stdout);
    const otherRate = await runBandwidth(node(), { command: 'CHECK', stdin: stdin(0, { prevResult: r.json, egressRate: 5_000_000 }), containerId: 'c0', netns: pods[0]?.path ?? '' });
    assert.equal(otherRate.json?.['code'], 131, otherRate.stdout);
    const [ifb] = await nodeIfbs(node());
    await nsRun(node(), ['ip', 'link', 'del', ifb ?? '']);
    const broken = await check();
    assert.equal(broken.json?.['code'], 131, broken.stdout);
    assert.match(String(broken.json?.['details']), /ifb bwp[0-9a-f]{12} is missing/);
  });

  it("CHECK passes after an ADD with containerd's burst (2^32-1 bits: a bucket the kernel caps), tbf and htb", async () => {
    for (const extra of [{}, { shapedSubnets: ['10.0.0.0/8', 'fd00::/8'] }]) {
      const rc = { runtimeConfig: { bandwidth: { IngressRate: 10_000_000, IngressBurst: 4294967295, EgressRate: 1_000_000, EgressBurst: 4294967295 } } };
      const limits = { ingressRate: undefined, ingressBurst: undefined, egressRate: undefined, egressBurst: undefined };
      const r = await add(1, { ...limits, ...rc, ...extra });
      assert.equal(r.code, 0, r.stdout);
      const check = await runBandwidth(node(), { command: 'CHECK', stdin: stdin(1, { ...limits, ...rc, ...extra, prevResult: r.json }), containerId: 'c1', netns: pods[1]?.path ?? '' });
      assert.equal(check.code, 0, check.stdout);
      assert.equal((await runBandwidth(node(), { command: 'DEL', stdin: stdin(1, { prevResult: r.json }), containerId: 'c1', netns: pods[1]?.path ?? '' })).code, 0);
    }
    assert.deepEqual(await nodeIfbs(node()), []);
  });

  it('DEL: removes qdiscs and ifb; succeeds again, without netns, without prevResult, with a config ADD refuses', async () => {
    assert.equal((await add(0)).code, 0);
    const del = (extra: Record<string, unknown>, netns: string) => runBandwidth(node(), { command: 'DEL', stdin: stdin(0, extra), containerId: 'c0', netns });
    assert.equal((await del({}, pods[0]?.path ?? '')).code, 0);
    assert.deepEqual(await nodeQdiscs(node()), []);
    assert.deepEqual(await nodeIfbs(node()), []);
    assert.equal((await del({}, pods[0]?.path ?? '')).code, 0);
    // No netns and no prevResult: the ifb (found by name) still goes; the veth's qdiscs go with the pod.
    assert.equal((await add(0)).code, 0);
    const r = await del({ prevResult: undefined, ingressRate: 5, ingressBurst: 0 }, '');
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(await nodeIfbs(node()), []);
    const bad = await runBandwidth(node(), { command: 'DEL', stdin: { cniVersion: '1.1.0', name: 'bwlife', type: 'bandwidth', unshapedSubnets: 'nope' }, containerId: 'c0' });
    assert.equal(bad.code, 0, bad.stdout);
    assert.equal((await del({ prevResult: undefined }, pods[0]?.path ?? '')).code, 0);
    await nsRun(node(), ['tc', 'qdisc', 'del', 'dev', String(((prev[0]?.['interfaces'] as Array<{ name: string }>)[1])?.name), 'root']).catch(() => undefined);
    await nsRun(node(), ['tc', 'qdisc', 'del', 'dev', String(((prev[0]?.['interfaces'] as Array<{ name: string }>)[1])?.name), 'ingress']).catch(() => undefined);
  });

  it('GC deletes the ifbs of unlisted attachments of this network only; needs the list', async () => {
    for (const i of [0, 1, 2]) assert.equal((await add(i)).code, 0);
    // Another network's ifb on the same node (same plugin, other name) is not this GC's business.
    const other = await runBandwidth(node(), { command: 'ADD', stdin: stdin(3, { name: 'bwother' }), containerId: 'c3', netns: pods[3]?.path ?? '' });
    assert.equal(other.code, 0, other.stdout);
    assert.equal((await nodeIfbs(node())).length, 4);
    const noList = await runBandwidth(node(), { command: 'GC', stdin: { cniVersion: '1.1.0', name: 'bwlife', type: 'bandwidth' } });
    assert.equal(noList.json?.['code'], 7, noList.stdout);
    const gc = await runBandwidth(node(), { command: 'GC', stdin: { cniVersion: '1.1.0', name: 'bwlife', type: 'bandwidth', 'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }] } });
    assert.equal(gc.code, 0, gc.stdout);
    const left = await nodeIfbs(node());
    assert.equal(left.length, 2, 'c1 of bwlife and c3 of bwother stay');
    const other2 = await runBandwidth(node(), { command: 'GC', stdin: { cniVersion: '1.1.0', name: 'bwother', type: 'bandwidth', 'cni.dev/valid-attachments': [] } });
    assert.equal(other2.code, 0);
    assert.equal((await nodeIfbs(node())).length, 1);
  });
});
