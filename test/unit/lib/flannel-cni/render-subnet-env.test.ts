import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeFlannelConfig } from '../../../../lib/flannel-cni/config.ts';
import { nodeSubnet, renderDelegate } from '../../../../lib/flannel-cni/render.ts';
import type { SubnetEnv } from '../../../../lib/flannel/subnet-env.ts';
import type { NetConf } from '../../../../lib/cni/types.ts';
import { CniError } from '../../../../lib/cni/errors.ts';

const env: SubnetEnv = { network: '10.244.0.0/16', subnet: '10.244.3.1/24', mtu: 1450, ipMasq: true };

void describe('flannel delegate rendering', () => {
  it('renders bridge + host-local as flannel does', () => {
    const cfg = normalizeFlannelConfig({ cniVersion: '1.0.0', name: 'weft', type: 'flannel-vxlan' }, '1.0.0');
    assert.equal(cfg.subnetFile, '/run/flannel/subnet.env');
    assert.equal(cfg.dataDir, '/var/lib/cni/flannel');
    assert.deepEqual(renderDelegate(cfg, env), {
      name: 'weft', cniVersion: '1.0.0', type: 'bridge', ipMasq: false, mtu: 1450, isGateway: true, weftMasqExempt: ['10.244.0.0/16'],
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '10.244.0.0/16' }] },
    });
  });

  it('delegate keys win; ipam keys merge (dataDir, extra routes first); runtimeConfig passes on', () => {
    const raw: NetConf = {
      cniVersion: '0.4.0', name: 'n', type: 'host-gw', subnetFile: '/x/subnet.env', dataDir: '/x/flannel',
      delegate: { type: 'bridge', ipMasq: true, mtu: 1400, isGateway: false, bridge: 'weft0' },
      ipam: { type: 'host-local', dataDir: '/x/ipam', routes: [{ dst: '0.0.0.0/0' }] },
      runtimeConfig: { ips: ['10.244.3.9/24'] },
    };
    const d = renderDelegate(normalizeFlannelConfig(raw, '0.4.0'), { ...env, ipMasq: false });
    assert.equal(d['ipMasq'], true);
    assert.equal(d['mtu'], 1400);
    assert.equal(d['isGateway'], false);
    assert.equal(d['bridge'], 'weft0');
    assert.deepEqual(d['ipam'], { type: 'host-local', dataDir: '/x/ipam', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '0.0.0.0/0' }, { dst: '10.244.0.0/16' }] });
    assert.deepEqual(d['runtimeConfig'], { ips: ['10.244.3.9/24'] });
  });

  it('rejects bad keys with code 7 naming them', () => {
    for (const [conf, re] of [
      [{ delegate: 'bridge' }, /delegate/], [{ ipam: [] }, /ipam/], [{ subnetFile: 'rel' }, /subnetFile/], [{ dataDir: 3 }, /dataDir/],
      [{ delegate: { type: 5 } }, /delegate.type/],
    ] as const) {
      assert.throws(() => normalizeFlannelConfig({ cniVersion: '1.0.0', name: 'n', type: 't', ...conf } as NetConf, '1.0.0'),
        (e: unknown) => e instanceof CniError && e.code === 7 && re.test(e.message));
    }
  });

  it('nodeSubnet turns the gateway form into the network', () => {
    assert.equal(nodeSubnet({ ...env, subnet: '10.244.3.1/24' }), '10.244.3.0/24');
    assert.equal(nodeSubnet({ ...env, subnet: '10.1.0.129/25' }), '10.1.0.128/25');
  });
});
