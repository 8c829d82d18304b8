// parseBandwidthConfig: Go's key matching (case folded, last repeat wins), the top-level entry winning
// over runtimeConfig.bandwidth, the reference's refusals (code 7), subnets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import { parseBandwidthConfig } from '../../../../plugins/bandwidth/config.ts';

const base = { cniVersion: '1.0.0', name: 'net1', type: 'bandwidth' };
const parse = (extra: Record<string, unknown>) => parseBandwidthConfig({ config: { ...base, ...extra }, cniVersion: '1.0.0' });
const refused = (text: string) => (e: unknown) => e instanceof CniError && e.code === 7 && `${e.msg} ${e.details}`.includes(text);

describe('Go key matching (lib/cni/decode.ts through validateConfig)', () => {
  it('any case, the last repeat wins, nested runtimeConfig.bandwidth too, unknown keys ignored', () => {
    assert.deepEqual(parse({ INGRESSRATE: 8, ingressRate: 16, ingressBurst: 8, Other: 3 }).ingress, { rate: 16n, burst: 8n });
    assert.deepEqual(parse({ ingressRate: 16, IngressRate: 24, ingressburst: 8 }).ingress, { rate: 24n, burst: 8n });
    assert.deepEqual(parse({ RuntimeConfig: { Bandwidth: { EgressRate: 80, EGRESSBURST: 4 } } }).egress, { rate: 80n, burst: 4n });
  });
});

describe('parseBandwidthConfig', () => {
  it('nothing configured: no limits, no subnets', () => {
    assert.deepEqual(parse({}), { name: 'net1', cniVersion: '1.0.0', ingress: null, egress: null, subnets: [], exclude: false, validAttachments: null });
  });

  it('runtimeConfig.bandwidth as kubelet (lower case) and containerd (capitalised) send it', () => {
    const want = { ingress: { rate: 20_000_000n, burst: 2_147_483_647n }, egress: { rate: 1_000_000n, burst: 2_147_483_647n } };
    for (const bw of [
      { ingressRate: 20_000_000, ingressBurst: 2147483647, egressRate: 1_000_000, egressBurst: 2147483647 },
      { IngressRate: 20_000_000, IngressBurst: 2147483647, EgressRate: 1_000_000, EgressBurst: 2147483647 },
    ]) {
      const c = parse({ runtimeConfig: { bandwidth: bw } });
      assert.deepEqual({ ingress: c.ingress, egress: c.egress }, want);
    }
  });

  it('any top-level entry key (even null or a subnet list) makes runtimeConfig.bandwidth ignored, as Go allocates the embedded entry', () => {
    const rc = { runtimeConfig: { bandwidth: { ingressRate: 1000, ingressBurst: 1000 } } };
    assert.equal(parse(rc).ingress?.rate, 1000n);
    assert.equal(parse({ ...rc, egressRate: null }).ingress, null);
    assert.equal(parse({ ...rc, shapedSubnets: ['10.0.0.0/8'] }).ingress, null);
    assert.deepEqual(parse({ ...rc, EgressRate: 800, egressBurst: 80 }).egress, { rate: 800n, burst: 80n });
  });

  it('refuses what the reference refuses, with its messages', () => {
    assert.throws(() => parse({ ingressRate: 100 }), refused('if rate is set, burst must also be set'));
    assert.throws(() => parse({ egressBurst: 100 }), refused('if burst is set, rate must also be set'));
    assert.throws(() => parse({ ingressRate: 100, ingressBurst: 8 * 0xffffffff }), refused('burst cannot be more than 4GB'));
    assert.doesNotThrow(() => parse({ ingressRate: 100, ingressBurst: 8 * 0xffffffff - 1 }));
    assert.throws(() => parse({ ingressRate: -1, ingressBurst: 8 }), refused('ingressRate'));
    assert.throws(() => parse({ ingressRate: 1.5, ingressBurst: 8 }), refused('ingressRate'));
    assert.throws(() => parse({ ingressRate: '100', ingressBurst: 8 }), refused('ingressRate'));
    assert.throws(() => parse({ ingressRate: 100, ingressBurst: 8, unshapedSubnets: ['10.0.0.0/8'], shapedSubnets: ['10.1.0.0/16'] }), refused('cannot be both specified'));
    assert.throws(() => parse({ ingressRate: 100, ingressBurst: 8, unshapedSubnets: ['10.0.0.0/8', 'hello'] }), refused('bad subnet "hello"'));
  });

  it('refuses a rate under 8 bit/s (0 bytes/s: the kernel would refuse it at ADD)', () => {
    assert.throws(() => parse({ egressRate: 7, egressBurst: 100 }), refused('at least 8 bits'));
  });

  it('subnets: checked only when something is shaped (as the reference), canonical, exclude flag', () => {
    assert.deepEqual(parse({ unshapedSubnets: ['hello'] }).subnets, []);
    const c = parse({ ingressRate: 100, ingressBurst: 8, unshapedSubnets: ['10.1.2.3/8', 'fd00::/64'] });
    assert.equal(c.exclude, true);
    assert.deepEqual(c.subnets.map((s) => [s.addr.family, s.addr.value, s.prefix]), [[4, 0x0a000000n, 8], [6, 0xfd00n << 112n, 64]]);
    assert.equal(parse({ ingressRate: 100, ingressBurst: 8, shapedSubnets: ['10.0.0.0/8'] }).exclude, false);
  });

  it('GC reads cni.dev/valid-attachments', () => {
    assert.deepEqual(parse({ 'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }] }).validAttachments, [{ containerId: 'c1', ifName: 'eth0' }]);
  });
});
