import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cniCode } from '../../lib/cni/helpers.ts';
import { DEFAULT_DATA_DIR, dataDirOf, parseTuningConfig } from '../../../../plugins/tuning/config.ts';

const base = { cniVersion: '1.0.0', name: 'tn', type: 'tuning' };
const parse = (extra: Record<string, unknown>, args = '') => parseTuningConfig({ config: { ...base, ...extra } as never, args, ifName: 'eth0' });
const code = cniCode;

describe('tuning config', () => {
  it('defaults: nothing to change, reference data dir', () => {
    const c = parse({});
    assert.deepEqual([c.sysctls, c.mac, c.promisc, c.mtu, c.allmulti, c.txQLen, c.dataDir], [[], undefined, false, 0, undefined, undefined, DEFAULT_DATA_DIR]);
  });

  it('MAC precedence: mac < CNI_ARGS MAC < runtimeConfig.mac < args.cni.mac, normalised to lower-case colons', () => {
    assert.equal(parse({ mac: '02-00-00-00-00-0A' }).mac, '02:00:00:00:00:0a');
    assert.equal(parse({ mac: '02:00:00:00:00:01' }, 'MAC=02:00:00:00:00:02').mac, '02:00:00:00:00:02');
    assert.equal(parse({ mac: '02:00:00:00:00:01', runtimeConfig: { mac: '02:00:00:00:00:03' } }, 'MAC=02:00:00:00:00:02').mac, '02:00:00:00:00:03');
    assert.equal(parse({ runtimeConfig: { mac: '02:00:00:00:00:03' }, args: { cni: { mac: '02:00:00:00:00:04' } } }).mac, '02:00:00:00:00:04');
  });

  it('args.cni overrides the other keys and merges sysctls', () => {
    const c = parse({ mtu: 1400, promisc: false, sysctl: { 'net.ipv4.ip_forward': '0' }, args: { cni: { mtu: 1300, promisc: true, allmulti: false, txQLen: 0, sysctl: { 'net.ipv4.conf.IFNAME.arp_notify': '1' } } } });
    assert.deepEqual([c.mtu, c.promisc, c.allmulti, c.txQLen], [1300, true, false, 0]);
    assert.deepEqual(c.sysctls.map((s) => s.name), ['net/ipv4/ip_forward', 'net/ipv4/conf/eth0/arp_notify']);
  });

  it('refuses a bad MAC, a negative MTU, a relative dataDir and unknown CNI_ARGS', () => {
    assert.equal(code(() => parse({ mac: 'zz:00:00:00:00:00' })), 7);
    assert.equal(code(() => parse({ mtu: -1 })), 7);
    assert.equal(code(() => parse({ dataDir: 'rel/dir' })), 7);
    assert.equal(code(() => parse({}, 'FOO=1')), 4);
    assert.doesNotThrow(() => parse({}, 'IgnoreUnknown=1;FOO=1'));
  });

  it('dataDirOf is lenient for DEL: a non-string falls back to the default', () => {
    assert.equal(dataDirOf({ dataDir: 5 }), DEFAULT_DATA_DIR);
    assert.equal(dataDirOf({ dataDir: '/var/run/x' }), '/var/run/x');
  });
});

describe('tuning config decoding (Go encoding/json semantics)', () => {
  it('matches keys case-insensitively (containerd-style capitalised keys)', () => {
    const c = parse({ MTU: 1400, SysCtl: { 'net.ipv4.ip_forward': '1' }, RuntimeConfig: { Mac: '02:00:00:00:00:07' } });
    assert.equal(c.mtu, 1400);
    assert.deepEqual(c.sysctls.map((s) => s.name), ['net/ipv4/ip_forward']);
    assert.equal(c.mac, '02:00:00:00:00:07');
  });
});
