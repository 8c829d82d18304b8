// bridge's ADD, CHECK and DEL run in-process through the skeleton (runPlugin), with host-local run
// in-process as bridge's main.ts composes it. The test moves its main thread into a node namespace it
// created for the whole file (the plugin's "host"), and asserts kernel state through our netlink layer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostLocalPlugin } from '../../../../ipam/host-local/plugin.ts';
import { registerInProcess, unregisterInProcess } from '../../../../lib/cni/delegate.ts';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import type { PluginOutput } from '../../../../lib/cni/plugin.ts';
import { Rtnl } from '../../../../lib/netlink/index.ts';
import { currentNetnsPath, openNetns, withNetns, type NetnsHandle } from '../../../../lib/netns/index.ts';
import { sys } from '../../../../lib/sys/index.ts';
import { hostVethName } from '../../../../lib/attach/bridge-veth.ts';
import { bridgePlugin } from '../../../../plugins/bridge/plugin.ts';
import { generateValidators } from '../../../../scripts/gen-validators.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../../testkit/netns.ts';

const NET = 'weft-t-brip';
const BRIDGE = 'brt0';
const CID = 'ctr-inproc-1';

describe('bridge cmdAdd/cmdCheck/cmdDel in-process', rootOnly(), () => {
  let node: TestNetns;
  let pod: TestNetns;
  let home: NetnsHandle;
  let nodeNs: NetnsHandle;
  let podNs: NetnsHandle;
  const dir = mkdtempSync(join(tmpdir(), 'weft-t-brip-'));
  const dataDir = join(dir, 'ipam');
  const binDir = join(dir, 'bin');
  let addResult: Record<string, unknown> | undefined;

  const conf = (extra: Record<string, unknown> = {}): Buffer =>
    Buffer.from(JSON.stringify({
      cniVersion: '1.0.0', name: NET, type: 'bridge', bridge: BRIDGE, isGateway: true, ipMasq: false,
      ipam: { type: 'host-local', subnet: '10.77.0.0/24', dataDir }, ...extra,
    }));
  const call = (command: string, stdin: Buffer, netns = pod.path): Promise<PluginOutput> =>
    runPlugin(bridgePlugin, { env: { CNI_COMMAND: command, CNI_CONTAINERID: CID, CNI_NETNS: netns, CNI_IFNAME: 'eth0', CNI_PATH: binDir }, stdin });
  const inPod = <T>(fn: (r: Rtnl) => T): T => withNetns(podNs, () => {
    const r = Rtnl.open();
    try { return fn(r); } finally { r.close(); }
  });
  const onNode = <T>(fn: (r: Rtnl) => T): T => {
    const r = Rtnl.open(); // the main thread is in the node namespace: the socket is too
    try { return fn(r); } finally { r.close(); }
  };

  before(async () => {
    if (!existsSync(join(import.meta.dirname, '../../../../gen/validators/bridge.js'))) await generateValidators();
    // host-local runs in-process when CNI_PATH names one of our bundles: a file with our bundle header.
    mkdirSync(binDir);
    writeFileSync(join(binDir, 'host-local'), `#!/usr/bin/env node\n// weft-bundle host-local ${hostLocalPlugin.version}\nprocess.exit(99);\n`, { mode: 0o755 });
    registerInProcess('host-local', hostLocalPlugin);
    node = await createTestNetns('weft-t-brn');
    pod = await createTestNetns('weft-t-brp');
    podNs = openNetns(pod.path);
    nodeNs = openNetns(node.path);
    home = openNetns(currentNetnsPath());
    sys().setns(nodeNs.fd);
  });
  after(async () => {
    if (home !== undefined) sys().setns(home.fd);
    home?.close();
    nodeNs?.close();
    podNs?.close();
    unregisterInProcess('host-local');
    await pod?.destroy();
    await node?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ADD: bridge with the gateway, veth enslaved under its computed name, pod eth0 addressed', async () => {
    const out = await call('ADD', conf());
    assert.equal(out.exitCode, 0, out.stdout);
    addResult = JSON.parse(out.stdout) as Record<string, unknown>;
    const ips = addResult['ips'] as Array<{ address: string; gateway: string }>;
    assert.equal(ips.length, 1);
    assert.match(ips[0]?.address ?? '', /^10\.77\.0\.\d+\/24$/);
    assert.equal(ips[0]?.gateway, '10.77.0.1');
    onNode((r) => {
      const br = r.getLink(BRIDGE);
      assert.ok(br?.up, 'bridge up');
      assert.ok(r.listAddrs({ family: 4, index: br.index }).some((a) => a.cidr === '10.77.0.1/24'), 'gateway on the bridge');
      const veth = r.getLink(hostVethName(NET, CID, 'eth0'));
      assert.equal(veth?.master, br.index, 'host veth enslaved to the bridge');
    });
    inPod((r) => {
      const eth0 = r.getLink('eth0');
      assert.ok(eth0?.up, 'pod eth0 up');
      assert.deepEqual(r.listAddrs({ family: 4, index: eth0.index }).map((a) => a.cidr), [ips[0]?.address]);
    });
    assert.equal(readdirSync(join(dataDir, NET)).filter((f) => f.startsWith('10.')).length, 1, 'one address reserved');
  });

  it('CHECK with the ADD result succeeds; CHECK after the pod address is removed fails', async () => {
    assert.ok(addResult);
    const ok = await call('CHECK', conf({ prevResult: addResult }));
    assert.equal(ok.exitCode, 0, ok.stdout);
    const address = (addResult['ips'] as Array<{ address: string }>)[0]?.address ?? '';
    inPod((r) => r.delAddr({ index: r.getLink('eth0')?.index ?? 0, cidr: address }));
    const bad = await call('CHECK', conf({ prevResult: addResult }));
    assert.equal(bad.exitCode, 1, bad.stdout);
  });

  it('DEL removes the pair and releases the address; a second DEL, and one without a netns, succeed', async () => {
    assert.ok(addResult);
    const out = await call('DEL', conf({ prevResult: addResult }));
    assert.equal(out.exitCode, 0, out.stdout);
    onNode((r) => assert.equal(r.getLink(hostVethName(NET, CID, 'eth0')), null, 'host veth gone'));
    inPod((r) => assert.equal(r.getLink('eth0'), null, 'pod eth0 gone'));
    assert.equal(readdirSync(join(dataDir, NET)).filter((f) => f.startsWith('10.')).length, 0, 'address released');
    assert.equal((await call('DEL', conf({ prevResult: addResult }))).exitCode, 0);
    assert.equal((await call('DEL', conf(), '')).exitCode, 0);
  });
});
