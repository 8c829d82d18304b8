// The `flannel` type's rendering against flannel's cni-plugin contract (flannel.go, flannel_linux.go).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import type { NetConf } from '../../../../lib/cni/types.ts';
import { delDataDir, normalizeFlannelConfig } from '../../../../lib/flannel-cni/config.ts';
import { renderDelegate } from '../../../../lib/flannel-cni/render.ts';
import { parseFlannelSubnetFile } from '../../../../lib/flannel/subnet-file.ts';
import { specIsCurrent } from '../../../../lib/flannel-cni/vtep-replay.ts';

const V4 = parseFlannelSubnetFile('FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n', 'f');
const DUAL = parseFlannelSubnetFile('FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.1.1/24\nFLANNEL_IPV6_NETWORK=2001:cafe:42::/56\n' +
  'FLANNEL_IPV6_SUBNET=2001:cafe:42:1::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n', 'f');

function render(conf: Record<string, unknown>, env = V4): Record<string, unknown> {
  const raw = { cniVersion: '0.3.1', name: 'cbr0', type: 'flannel', ...conf } as NetConf;
  return renderDelegate(normalizeFlannelConfig(raw, '0.3.1'), env);
}

void describe('flannel delegate rendering (flannel cni-plugin contract)', () => {
  it("kube-flannel's cni-conf.json: bridge, flannel's defaults filled in, delegate keys passed through", () => {
    assert.deepEqual(render({ delegate: { hairpinMode: true, isDefaultGateway: true } }), {
      hairpinMode: true, isDefaultGateway: true, name: 'cbr0', cniVersion: '0.3.1', type: 'bridge', ipMasq: false, mtu: 1450, isGateway: true,
      weftMasqExempt: ['10.244.0.0/16'],
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '10.244.0.0/16' }] },
    });
  });

  it('defaults apply only when absent: ipMasq, mtu, isGateway kept as configured (even false/0)', () => {
    const d = render({ delegate: { ipMasq: true, mtu: 0, isGateway: false, forceAddress: true, bridge: 'kube-bridge' } }, DUAL);
    assert.equal(d['ipMasq'], true);
    assert.equal(d['mtu'], 0);
    assert.equal(d['isGateway'], false);
    assert.equal(d['forceAddress'], true);
    assert.equal(d['bridge'], 'kube-bridge');
    assert.equal(render({}, DUAL)['ipMasq'], true, 'FLANNEL_IPMASQ=false: the delegate masquerades');
  });

  it('isGateway and weftMasqExempt are added for the bridge type only; another type keeps exactly its keys', () => {
    const d = render({ delegate: { type: 'ipvlan', master: 'eth0' } });
    assert.equal(d['isGateway'], undefined);
    assert.equal(d['weftMasqExempt'], undefined);
    assert.equal(d['type'], 'ipvlan');
    assert.equal(d['master'], 'eth0');
  });

  it('weftMasqExempt: every cluster network, IPv4 then IPv6; a delegate value wins', () => {
    assert.deepEqual(render({}, DUAL)['weftMasqExempt'], ['10.42.0.0/16', '2001:cafe:42::/56']);
    assert.deepEqual(render({ delegate: { weftMasqExempt: [] } })['weftMasqExempt'], []);
  });

  it('dual-stack: one range set per family, a route to every network', () => {
    assert.deepEqual(render({}, DUAL)['ipam'], {
      type: 'host-local',
      ranges: [[{ subnet: '10.42.1.0/24' }], [{ subnet: '2001:cafe:42:1::/64' }]],
      routes: [{ dst: '10.42.0.0/16' }, { dst: '2001:cafe:42::/56' }],
    });
  });

  it('ipam merges as flannel does: type kept if set, ranges replaced, configured routes first', () => {
    const d = render({ ipam: { type: 'other-ipam', ranges: [[{ subnet: '1.2.3.0/24' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: '/x' } });
    assert.deepEqual(d['ipam'], { type: 'other-ipam', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '0.0.0.0/0' }, { dst: '10.244.0.0/16' }], dataDir: '/x' });
  });

  it('runtimeConfig reaches the delegate; an empty cniVersion is not written', () => {
    const rc = { portMappings: [{ HostPort: 8080, ContainerPort: 80, Protocol: 'tcp' }] };
    assert.deepEqual(render({ runtimeConfig: rc })['runtimeConfig'], rc);
    const d = renderDelegate(normalizeFlannelConfig({ cniVersion: '', name: 'n', type: 'flannel' }, ''), V4);
    assert.equal('cniVersion' in d, false);
  });

  it("refuses delegate.name, delegate.ipam and a non-string type with flannel's messages (code 7)", () => {
    for (const [delegate, msg] of [
      [{ name: 'x' }, "'delegate' dictionary must not have 'name' field, it'll be set by flannel"],
      [{ ipam: {} }, "'delegate' dictionary must not have 'ipam' field, it'll be set by flannel"],
      [{ type: 1 }, "'delegate' dictionary, if present, must have (string) 'type' field"],
    ] as const) {
      assert.throws(() => render({ delegate }), (e: unknown) => e instanceof CniError && e.code === 7 && e.msg === msg);
    }
  });

  it("flannel's own keys match case-insensitively, as Go decodes them; delegate keys stay as written", () => {
    const cfg = normalizeFlannelConfig({ cniVersion: '1.0.0', name: 'n', type: 'flannel', SubnetFile: '/s/env', DATADIR: '/d', Delegate: { HairpinMode: true } } as NetConf, '1.0.0');
    assert.equal(cfg.subnetFile, '/s/env');
    assert.equal(cfg.dataDir, '/d');
    assert.deepEqual(cfg.delegate, { HairpinMode: true });
    assert.equal(delDataDir({ cniVersion: '1.0.0', name: 'n', type: 'flannel', DataDir: '/x' }), '/x');
  });

  it('DEL finds dataDir without validating anything else (default, custom, unusable)', () => {
    assert.equal(delDataDir({ cniVersion: '1.0.0', name: 'n', type: 'flannel' }), '/var/lib/cni/flannel');
    assert.equal(delDataDir({ cniVersion: '1.0.0', name: 'n', type: 'flannel', dataDir: '/d', delegate: 5 }), '/d');
    assert.equal(delDataDir({ cniVersion: '1.0.0', name: 'n', type: 'flannel', dataDir: 7 }), null);
  });

  it('replays a VTEP spec only while it matches the lease and MTU in subnet.env', () => {
    const spec = { name: 'flannel.1', vni: 1, port: 8472, local: '192.0.2.11', uplink: 'eth0', mac: '02:00:00:00:00:01', mtu: 1450, address: '10.244.3.0/32' };
    assert.equal(specIsCurrent(spec, V4), true);
    assert.equal(specIsCurrent({ ...spec, mtu: 1500 }, V4), false, 'host-gw now: pods use the uplink MTU');
    assert.equal(specIsCurrent({ ...spec, address: '10.244.9.0/32' }, V4), false, 'another lease');
  });

  it('dual stack: replays flannel-v6 (/128 of the IPv6 lease, the pods\' MTU) and flannel.1 (20 above it)', () => {
    const dual = { ...DUAL, mtu: 1430 };
    const v4 = { name: 'flannel.1', vni: 1, port: 8472, local: '192.0.2.11', uplink: 'eth0', mac: '02:00:00:00:00:01', mtu: 1450, address: '10.42.1.0/32' };
    const v6 = { ...v4, name: 'flannel-v6.1', local: '2001:db8::11', mtu: 1430, address: '2001:cafe:42:1::/128' };
    assert.equal(specIsCurrent(v4, dual), true);
    assert.equal(specIsCurrent(v6, dual), true);
    assert.equal(specIsCurrent(v4, { ...dual, mtu: 1450 }), true, 'one MTU set for both in the net-conf');
    assert.equal(specIsCurrent({ ...v6, address: '2001:cafe:42:9::/128' }, dual), false, 'another IPv6 lease');
    assert.equal(specIsCurrent(v6, V4), false, 'IPv6 no longer enabled');
    assert.equal(specIsCurrent({ ...v4, mtu: 1470 }, V4), false, 'the 20-byte allowance is for dual stack only');
  });
});
