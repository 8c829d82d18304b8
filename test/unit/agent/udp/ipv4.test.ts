// agent/udp/ipv4: header checks, RFC 1624 TTL update against a full recomputation, ICMP errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ICMP_DEST_UNREACH, ICMP_ERROR_MAX, decrementTtl, formatIcmpError, internetChecksum, ipv4Dst, ipv4HeaderLength, ipv4Src, mayAnswerWithIcmp,
} from '../../../../agent/udp/ipv4.ts';
import { packet } from './packets.ts';

void describe('ipv4 helpers', () => {
  it('internetChecksum: RFC 1071 example and a header that verifies to zero', () => {
    // RFC 1071 section 3: 0001 f203 f4f5 f6f7 sums to ddf2 (checksum = ~ddf2).
    assert.equal(internetChecksum(Buffer.from('0001f203f4f5f6f7', 'hex'), 0, 8), ~0xddf2 & 0xffff);
    const p = packet('10.244.1.2', '10.244.2.3');
    assert.equal(internetChecksum(p, 0, 20), 0);
    assert.equal(internetChecksum(Buffer.from([0xab]), 0, 1), ~0xab00 & 0xffff, 'odd length pads with zero');
  });

  it('ipv4HeaderLength refuses short, non-v4, bad IHL and over-long total length', () => {
    const p = packet('10.244.1.2', '10.244.2.3');
    assert.equal(ipv4HeaderLength(p, 0, p.length), 20);
    assert.equal(ipv4HeaderLength(p, 0, 19), 0);
    assert.equal(ipv4HeaderLength(p, 0, p.length - 1), 0, 'total length beyond what was read');
    const v6 = Buffer.from(p); v6[0] = 0x60;
    assert.equal(ipv4HeaderLength(v6, 0, v6.length), 0);
    const ihl = Buffer.from(p); ihl[0] = 0x44;
    assert.equal(ipv4HeaderLength(ihl, 0, ihl.length), 0);
    assert.equal(ipv4Src(p, 0), 0x0af40102);
    assert.equal(ipv4Dst(p, 0), 0x0af40203);
  });

  it('decrementTtl keeps the header checksum valid for every TTL and protocol', () => {
    for (let ttl = 2; ttl <= 255; ttl++) {
      for (const proto of [1, 6, 17, 255]) {
        const p = packet('10.244.1.2', '10.244.2.3', { ttl, proto });
        decrementTtl(p, 0);
        assert.equal(p[8], ttl - 1);
        assert.equal(internetChecksum(p, 0, 20), 0, `ttl ${ttl} proto ${proto}`);
      }
    }
  });

  it('formatIcmpError: net unreachable quoting the header and 8 bytes, both checksums valid', () => {
    const orig = packet('10.244.1.2', '10.250.0.9', { payload: Buffer.from('0800f7ff00000000deadbeefdeadbeef', 'hex') });
    const out = Buffer.alloc(200);
    const n = formatIcmpError(out, 50, orig, 0, 20, orig.length, ICMP_DEST_UNREACH, 0, 0x0af40100);
    assert.equal(n, 20 + 8 + 28);
    assert.ok(n <= ICMP_ERROR_MAX);
    const e = out.subarray(50, 50 + n);
    assert.equal(ipv4HeaderLength(e, 0, n), 20);
    assert.equal(internetChecksum(e, 0, 20), 0);
    assert.equal(internetChecksum(e, 20, n - 20), 0);
    assert.equal(e[9], 1);
    assert.equal(ipv4Src(e, 0), 0x0af40100);
    assert.equal(ipv4Dst(e, 0), 0x0af40102);
    assert.deepEqual([e[20], e[21]], [3, 0]);
    assert.deepEqual(e.subarray(28), orig.subarray(0, 28));
  });

  it('mayAnswerWithIcmp: never about ICMP errors, later fragments or multicast sources', () => {
    const echo = packet('10.244.1.2', '10.250.0.9');
    assert.equal(mayAnswerWithIcmp(echo, 0, 20, echo.length), true);
    const err = packet('10.244.1.2', '10.250.0.9', { payload: Buffer.from('0300000000000000', 'hex') });
    assert.equal(mayAnswerWithIcmp(err, 0, 20, err.length), false);
    const frag = packet('10.244.1.2', '10.250.0.9', { proto: 17, frag: 10 });
    assert.equal(mayAnswerWithIcmp(frag, 0, 20, frag.length), false);
    const mc = packet('224.0.0.1', '10.250.0.9', { proto: 17 });
    assert.equal(mayAnswerWithIcmp(mc, 0, 20, mc.length), false);
  });
});
