// STATUS of the four flannel plugins and of bridge, with delegates exec'd from CNI_PATH (recording
// shell scripts): 50 while the node has no subnet lease (no or an incomplete subnet.env), then the
// rendered delegate's answer; bridge passes its IPAM's answer on. No root: no namespace is opened.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from '../../../../lib/cni/plugin.ts';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import { bridgePlugin } from '../../../../plugins/bridge/plugin.ts';
import { flannelPlugin } from '../../../../plugins/flannel/plugin.ts';
import { flannelUdpPlugin } from '../../../../plugins/flannel-udp/plugin.ts';
import { flannelVxlanPlugin } from '../../../../plugins/flannel-vxlan/plugin.ts';
import { hostGwPlugin } from '../../../../plugins/host-gw/plugin.ts';

const SUBNET_ENV = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

void describe('STATUS', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-status-'));
    writeFileSync(join(dir, 'recorder'), '#!/bin/sh\ncat > "$RECORD.$CNI_COMMAND"\nexit 0\n');
    writeFileSync(join(dir, 'notready'), '#!/bin/sh\ncat >/dev/null\nprintf \'{"cniVersion":"1.1.0","code":50,"msg":"host-local range set is full"}\'\nexit 1\n');
    for (const f of ['recorder', 'notready']) chmodSync(join(dir, f), 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function status(plugin: Plugin, conf: Record<string, unknown>, tag: string, cniVersion = '1.1.0'): ReturnType<typeof runPlugin> {
    const stdin = JSON.stringify({ cniVersion, name: 'cbr0', type: plugin.name, ...conf });
    return runPlugin(plugin, { env: { CNI_COMMAND: 'STATUS', CNI_PATH: dir, RECORD: join(dir, `rec-${tag}`) }, stdin: Buffer.from(stdin) });
  }
  const code = (out: { stdout: string }): number => (JSON.parse(out.stdout) as { code: number }).code;

  for (const plugin of [flannelPlugin, flannelVxlanPlugin, hostGwPlugin, flannelUdpPlugin]) {
    it(`${plugin.name}: 50 without subnet.env or with an incomplete one; then the rendered delegate's STATUS`, async () => {
      const env = join(dir, `${plugin.name}.env`);
      const conf = { subnetFile: env, dataDir: join(dir, 'data'), delegate: { type: 'recorder' } };
      const missing = await status(plugin, conf, plugin.name);
      assert.equal(missing.exitCode, 1);
      assert.equal(code(missing), 50, missing.stdout);
      assert.match(missing.stdout, /not ready: this node holds no subnet lease yet/);
      writeFileSync(env, 'FLANNEL_NETWORK=10.244.0.0/16\n');
      const partial = await status(plugin, conf, plugin.name);
      assert.equal(code(partial), 50, partial.stdout);
      assert.match(partial.stdout, /is missing FLANNEL_SUBNET/);
      assert.ok(!existsSync(join(dir, `rec-${plugin.name}.STATUS`)), 'the delegate is not asked without a lease');
      writeFileSync(env, SUBNET_ENV);
      const ok = await status(plugin, conf, plugin.name);
      assert.equal(ok.exitCode, 0, ok.stdout);
      assert.equal(ok.stdout, '');
      const sent = JSON.parse(readFileSync(join(dir, `rec-${plugin.name}.STATUS`), 'utf8')) as Record<string, unknown>;
      assert.equal(sent['name'], 'cbr0');
      assert.equal(sent['cniVersion'], '1.1.0');
      assert.deepEqual(sent['ipam'], { type: 'host-local', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '10.244.0.0/16' }] });
      const down = await status(plugin, { ...conf, delegate: { type: 'notready' } }, plugin.name);
      assert.equal(code(down), 50, 'the delegate\'s answer');
      assert.match(down.stdout, /range set is full/);
    });
  }

  it('flannel: a bad config is 7; STATUS of a conflist below 1.1.0 is refused as the spec says', async () => {
    writeFileSync(join(dir, 'ok.env'), SUBNET_ENV);
    assert.equal(code(await status(flannelPlugin, { subnetFile: 'relative', delegate: { type: 'recorder' } }, 'bad')), 7);
    assert.equal(code(await status(flannelPlugin, { subnetFile: join(dir, 'ok.env'), delegate: { type: 'recorder' } }, 'old', '1.0.0')), 1);
  });

  it('bridge: its IPAM plugin\'s STATUS on the bridge\'s own stdin; a config ADD would refuse is 7', async () => {
    const ok = await status(bridgePlugin, { bridge: 'cni9', ipam: { type: 'recorder', x: 1 } }, 'bridge');
    assert.equal(ok.exitCode, 0, ok.stdout);
    const sent = JSON.parse(readFileSync(join(dir, 'rec-bridge.STATUS'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(sent['ipam'], { type: 'recorder', x: 1 });
    const down = await status(bridgePlugin, { ipam: { type: 'notready' } }, 'bridge2');
    assert.equal(code(down), 50);
    assert.equal(code(await status(bridgePlugin, { mtu: 'x', ipam: { type: 'recorder' } }, 'bridge3')), 7);
    assert.equal(code(await status(bridgePlugin, {}, 'bridge4')), 7, 'no ipam');
  });
});
