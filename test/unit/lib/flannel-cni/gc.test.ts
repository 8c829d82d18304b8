// GC of the flannel plugins: passed on to the delegate rendered from subnet.env with the runtime's
// valid attachments (a recording shell script on CNI_PATH); nothing collected without a lease; no
// list is code 7. No root: no namespace is opened.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import { flannelPlugin } from '../../../../plugins/flannel/plugin.ts';
import { hostGwPlugin } from '../../../../plugins/host-gw/plugin.ts';

void describe('flannel GC', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-flannel-gc-'));
    writeFileSync(join(dir, 'recorder'), '#!/bin/sh\ncat > "$RECORD.$CNI_COMMAND"\nexit 0\n');
    chmodSync(join(dir, 'recorder'), 0o755);
    writeFileSync(join(dir, 'subnet.env'), 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const valid = [{ containerID: 'c1', ifname: 'eth0' }];
  function gc(conf: Record<string, unknown>, tag: string, plugin = flannelPlugin): ReturnType<typeof runPlugin> {
    const stdin = JSON.stringify({ cniVersion: '1.1.0', name: 'cbr0', type: 'flannel', dataDir: join(dir, 'data'), delegate: { type: 'recorder' }, ...conf });
    return runPlugin(plugin, { env: { CNI_COMMAND: 'GC', CNI_PATH: dir, RECORD: join(dir, `rec-${tag}`) }, stdin: Buffer.from(stdin) });
  }

  it('the rendered delegate gets GC with both names of the valid-attachments list', async () => {
    for (const plugin of [flannelPlugin, hostGwPlugin]) {
      const out = await gc({ subnetFile: join(dir, 'subnet.env'), 'cni.dev/valid-attachments': valid, 'cni.dev/attachments': valid }, plugin.name, plugin);
      assert.equal(out.exitCode, 0, out.stdout);
      const sent = JSON.parse(readFileSync(join(dir, `rec-${plugin.name}.GC`), 'utf8')) as Record<string, unknown>;
      assert.equal(sent['name'], 'cbr0');
      assert.equal(sent['cniVersion'], '1.1.0');
      assert.deepEqual(sent['cni.dev/valid-attachments'], valid);
      assert.deepEqual(sent['cni.dev/attachments'], valid);
      assert.deepEqual((sent['ipam'] as { ranges: unknown }).ranges, [[{ subnet: '10.244.3.0/24' }]]);
    }
  });

  it('without subnet.env nothing is collected and GC succeeds; without the list it is 7', async () => {
    const none = await gc({ subnetFile: join(dir, 'absent.env'), 'cni.dev/valid-attachments': valid }, 'nolease');
    assert.equal(none.exitCode, 0, none.stdout);
    assert.ok(!existsSync(join(dir, 'rec-nolease.GC')));
    const bad = await gc({ subnetFile: join(dir, 'subnet.env') }, 'nolist');
    assert.equal((JSON.parse(bad.stdout) as { code: number }).code, 7);
    assert.ok(!existsSync(join(dir, 'rec-nolist.GC')));
  });
});
