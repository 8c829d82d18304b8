// The plugin through the skeleton, without the kernel: pass-through of prevResult when nothing is
// mapped (every result version), and the refusals that happen before anything is touched.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import { portmapPlugin } from '../../../../plugins/portmap/plugin.ts';

const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'ctr-1', CNI_NETNS: '/var/run/netns/pod-x', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin' };

const PREV: Record<string, Record<string, unknown>> = {
  '0.4.0': {
    cniVersion: '0.4.0',
    interfaces: [{ name: 'cni0', mac: '0a:58:0a:f4:00:01' }, { name: 'veth1', mac: '0a:58:0a:f4:00:02' }, { name: 'eth0', mac: '0a:58:0a:f4:00:05', sandbox: '/var/run/netns/pod-x' }],
    ips: [{ version: '4', address: '10.244.0.5/24', gateway: '10.244.0.1', interface: 2 }],
    routes: [{ dst: '0.0.0.0/0', gw: '10.244.0.1' }],
    dns: { nameservers: ['10.96.0.10'] },
  },
  '1.0.0': {
    cniVersion: '1.0.0',
    interfaces: [{ name: 'cni0', mac: '0a:58:0a:f4:00:01' }, { name: 'eth0', mac: '0a:58:0a:f4:00:05', sandbox: '/var/run/netns/pod-x' }],
    ips: [{ address: '10.244.0.5/24', gateway: '10.244.0.1', interface: 1 }, { address: 'fd00::5/64', interface: 1 }],
    routes: [{ dst: '0.0.0.0/0', gw: '10.244.0.1' }],
    dns: {},
  },
  '1.1.0': {
    cniVersion: '1.1.0',
    interfaces: [{ name: 'cni0', mac: '0a:58:0a:f4:00:01', mtu: 1450 }, { name: 'eth0', mac: '0a:58:0a:f4:00:05', sandbox: '/var/run/netns/pod-x', mtu: 1450 }],
    ips: [{ address: '10.244.0.5/24', gateway: '10.244.0.1', interface: 1 }],
    routes: [{ dst: '10.244.0.0/16', gw: '10.244.0.1', mtu: 1450 }],
    dns: {},
  },
};

async function add(conf: Record<string, unknown>): Promise<{ exitCode: number; doc: Record<string, unknown> }> {
  const out = await runPlugin(portmapPlugin, { env: ENV, stdin: Buffer.from(JSON.stringify(conf)) });
  return { exitCode: out.exitCode, doc: JSON.parse(out.stdout) as Record<string, unknown> };
}

describe('portmap through the skeleton', () => {
  for (const [version, prevResult] of Object.entries(PREV)) {
    it(`ADD ${version} without mappings prints prevResult unchanged`, async () => {
      const r = await add({ cniVersion: version, name: 'net1', type: 'portmap', capabilities: { portMappings: true }, prevResult });
      assert.equal(r.exitCode, 0);
      assert.deepEqual(r.doc, prevResult);
    });
  }

  it('ADD without prevResult is code 7 (portmap is a chained plugin)', async () => {
    const r = await add({ cniVersion: '1.0.0', name: 'net1', type: 'portmap', runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80 }] } });
    assert.equal(r.exitCode, 1);
    assert.equal(r.doc['code'], 7);
    assert.match(String(r.doc['msg']), /chained/);
  });

  it('ADD with a mapping but no container address of its family is code 122, before nft runs', async () => {
    const r = await add({
      cniVersion: '1.0.0', name: 'net1', type: 'portmap', prevResult: PREV['1.1.0'],
      runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80, hostIP: 'fd00::1' }] },
    });
    assert.equal(r.doc['code'], 122);
  });
});
