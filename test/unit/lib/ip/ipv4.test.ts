// lib/ip/ipv4.ts: IPv4 prefixes as numbers (flannel contract, weftd).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIPv4, formatIPv4, parseCidr4, parseCidr4Loose, overlapsCidr4, containsIPv4, lastIPv4 } from '../../../../lib/ip/ipv4.ts';

void describe('lib/ip ipv4', () => {
  void it('parses and formats addresses, refusing malformed ones', () => {
    assert.equal(parseIPv4('10.244.3.0'), 0x0af40300);
    assert.equal(formatIPv4(0xffffffff), '255.255.255.255');
    assert.equal(formatIPv4(parseIPv4('0.0.0.0') ?? -1), '0.0.0.0');
    for (const bad of ['1.2.3', '1.2.3.256', '01.2.3.4', '1.2.3.4.5', '', 'a.b.c.d', '1.2.3.-1']) assert.equal(parseIPv4(bad), null, bad);
  });
  void it('parses prefixes, strict about host bits', () => {
    assert.deepEqual(parseCidr4('10.244.0.0/16'), { ip: 0x0af40000, prefix: 16 });
    assert.equal(parseCidr4('10.244.0.1/16'), null);
    assert.deepEqual(parseCidr4Loose('10.244.0.1/16'), { ip: 0x0af40001, prefix: 16 });
    assert.equal(parseCidr4Loose('10.0.0.0/33'), null);
    assert.equal(parseCidr4Loose('10.0.0.0/024'), null);
  });
  void it('computes containment and overlap', () => {
    const a = { ip: 0x0a000000, prefix: 8 };
    const b = { ip: 0x0a010000, prefix: 16 };
    assert.equal(lastIPv4(a), 0x0affffff);
    assert.ok(overlapsCidr4(a, b) && overlapsCidr4(b, a));
    assert.ok(!overlapsCidr4(b, { ip: 0x0a020000, prefix: 16 }));
    assert.ok(containsIPv4(b, 0x0a01ffff) && !containsIPv4(b, 0x0a020000));
  });
});
