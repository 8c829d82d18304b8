// The reference's token-bucket numbers (its tests' values), subnet u32 keys, the ifb name and tag,
// and the pure halves of CHECK and GC.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCidr } from '../../../../lib/ip/cidr.ts';
import type { Link } from '../../../../lib/netlink/link.ts';
import { ETH_P_IP, ETH_P_IPV6 } from '../../../../lib/netlink/tc-msg.ts';
import { staleIfbs } from '../../../../plugins/bandwidth/gc.ts';
import { ifbMac, ifbName, isIfbName } from '../../../../plugins/bandwidth/names.ts';
import { planShaping, subnetKeys } from '../../../../plugins/bandwidth/plan.ts';
import { DEFAULT_TICK_IN_USEC, bucketParams, bufferTicks, parseTickInUsec, tbfDumpedBuffer, tbfLimit } from '../../../../plugins/bandwidth/shaping.ts';

const cidr = (s: string) => parseCidr(s) ?? assert.fail(s);

describe('token bucket numbers', () => {
  it('ticks per microsecond from /proc/net/psched as iproute2 computes them', () => {
    assert.equal(parseTickInUsec('000003e8 00000040 000f4240 3b9aca00\n'), 15.625);
    assert.equal(parseTickInUsec('garbage'), DEFAULT_TICK_IN_USEC);
  });

  it('buffer and limit as the reference computes them (its tests: 8/8 bits -> 15625000 ticks, 16/12 -> 7812500)', () => {
    assert.equal(bufferTicks(1n, 1, 15.625), 15_625_000);
    assert.equal(bufferTicks(2n, 1, 15.625), 7_812_500);
    assert.equal(tbfLimit(1n, 1), 1);
    // 10 Mbit/s with a 1 Mbit burst: 0.1 s of bucket, 25 ms of queue + the burst.
    assert.deepEqual(bucketParams({ rate: 10_000_000n, burst: 1_000_000n }, 15.625), { rateBytes: 1_250_000n, burstBytes: 125_000, buffer: 1_562_500, limit: 156_250 });
  });

  it('runtime-sized bursts saturate instead of wrapping the u32 fields; what a capping kernel dumps back', () => {
    // 1 Mbit/s with kubelet's burst of 2^31-1 bits: 2147 s of bucket, more ticks than a u32 holds.
    const p = bucketParams({ rate: 1_000_000n, burst: 2_147_483_647n }, 15.625);
    assert.equal(p.buffer, 0xffffffff);
    assert.equal(tbfDumpedBuffer(p.buffer), 67_108_863);
    assert.equal(tbfDumpedBuffer(1_562_500), 1_562_500);
  });
});

describe('subnet keys and plans', () => {
  it('IPv4 and IPv6 keys at the reference offsets for the destination, and at the source offsets', () => {
    assert.deepEqual(subnetKeys(cidr('10.0.0.0/8'), 'dst'), [{ mask: 0xff000000, val: 0x0a000000, off: 16 }]);
    assert.deepEqual(subnetKeys(cidr('10.0.0.0/8'), 'src'), [{ mask: 0xff000000, val: 0x0a000000, off: 12 }]);
    assert.deepEqual(subnetKeys(cidr('fd00:db8:abcd:1234:e000::/68'), 'dst'), [
      { mask: 0xffffffff, val: 0xfd000db8, off: 24 }, { mask: 0xffffffff, val: 0xabcd1234, off: 28 }, { mask: 0xf0000000, val: 0xe0000000, off: 32 },
    ]);
    assert.deepEqual(subnetKeys(cidr('fd00::/8'), 'src'), [{ mask: 0xff000000, val: 0xfd000000, off: 8 }]);
    assert.deepEqual(subnetKeys(cidr('0.0.0.0/0'), 'dst'), []);
  });

  it('no subnets: tbf; unshaped: capped default 1:30 and filters to 1:1; shaped: the reverse', () => {
    const b = bucketParams({ rate: 800n, burst: 800n }, 15.625);
    assert.equal(planShaping(b, [], false, 'dst').kind, 'tbf');
    const ex = planShaping(b, [cidr('10.0.0.0/8'), cidr('fd00::/8')], true, 'dst');
    assert.ok(ex.kind === 'htb');
    assert.equal(ex.defaultMinor, 0x30);
    assert.deepEqual(ex.filters.map((f) => [f.prio, f.protocol, f.minor]), [[16, ETH_P_IP, 1], [15, ETH_P_IPV6, 1]]);
    const inc = planShaping(b, [cidr('10.0.0.0/8')], false, 'src');
    assert.ok(inc.kind === 'htb');
    assert.deepEqual([inc.defaultMinor, inc.filters[0]?.minor], [1, 0x30]);
  });
});

describe('ifb names and GC', () => {
  it("the reference's ifb name: bwp + sha512(network + containerID), 15 bytes", () => {
    assert.equal(ifbName('mynet', 'dummy'), 'bwp1b29d9511ed2');
    assert.ok(isIfbName(ifbName('x', 'y')));
    assert.equal(ifbMac('mynet'), '0e:77:d2:36:76:b4');
  });

  it('GC picks ifbs of this network (name shape and MAC tag) named for no valid attachment', () => {
    const link = (name: string, mac: string, kind = 'ifb') => ({ name, mac, kind }) as Link;
    const mine = ifbMac('net1');
    const links = [
      link(ifbName('net1', 'live'), mine),
      link(ifbName('net1', 'dead'), mine),
      link(ifbName('net2', 'dead'), ifbMac('net2')),
      link(ifbName('net1', 'ref'), '5a:00:00:00:00:01'), // made by the reference: not ours to judge
      link('bwpnotahash', mine),
      link(ifbName('net1', 'veth'), mine, 'veth'),
    ];
    assert.deepEqual(staleIfbs(links, 'net1', [{ containerId: 'live' }]).map((l) => l.name), [ifbName('net1', 'dead')]);
  });
});
