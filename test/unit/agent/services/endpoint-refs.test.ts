import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointRefs, addrKey } from '../../../../agent/services/endpoint-refs.ts';

void describe('services endpoint refs', () => {
  it('counts distinct endpoints by address, port and protocol, forgetting one at zero', () => {
    const r = new EndpointRefs();
    r.move('10.244.1.6', 8080, 'tcp', 1);
    r.move('10.244.1.6', 8080, 'tcp', 1);
    r.move('10.244.1.6', 8080, 'udp', 1);
    r.move('10.244.1.6', 53, 'udp', 1);
    r.move('10.244.2.6', 8080, 'tcp', 1);
    assert.equal(r.size, 4);
    r.move('10.244.1.6', 8080, 'tcp', -1);
    assert.equal(r.size, 4);
    r.move('10.244.1.6', 8080, 'tcp', -1);
    assert.equal(r.size, 3);
    r.move('10.244.1.6', 8080, 'udp', -1);
    r.move('10.244.1.6', 53, 'udp', -1);
    r.move('10.244.9.9', 80, 'tcp', -1);
    assert.equal(r.size, 1);
    // The address's packed slot is free again: a new port takes it, and the old ones are not mixed up with it.
    r.move('10.244.1.6', 9090, 'tcp', 1);
    r.move('10.244.1.6', 8080, 'tcp', 1);
    assert.equal(r.size, 3);
  });

  it('keeps counts past the packed limit exactly (65535/udp, the largest port)', () => {
    const r = new EndpointRefs();
    for (let i = 0; i < 9000; i++) r.move('fd00::1', 65535, 'udp', 1);
    assert.equal(r.size, 1);
    for (let i = 0; i < 8999; i++) r.move('fd00::1', 65535, 'udp', -1);
    assert.equal(r.size, 1);
    r.move('fd00::1', 65535, 'udp', -1);
    assert.equal(r.size, 0);
  });

  it('keys canonical IPv4 text by its value and anything else by its text, so different texts never share a key', () => {
    assert.equal(addrKey('10.244.1.6'), ((10 << 24) | (244 << 16) | (1 << 8) | 6));
    assert.equal(addrKey('0.0.0.0'), 0);
    assert.equal(addrKey('255.255.255.255'), -1);
    for (const s of ['010.244.1.6', '10.244.1.06', '10.244.1', '10.244.1.6.7', '10.256.1.6', '1..2.3', '.1.2.3', '1.2.3.', 'fd00::1', '::ffff:10.0.0.1', '']) assert.equal(addrKey(s), s, s);
    const r = new EndpointRefs();
    r.move('10.0.0.1', 80, 'tcp', 1);
    r.move('010.0.0.1', 80, 'tcp', 1);
    assert.equal(r.size, 2);
  });
});
