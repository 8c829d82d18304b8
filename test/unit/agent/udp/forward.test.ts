// agent/udp/forward + peer-table: longest-prefix routing, TTL and ICMP verdicts, stranger checks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DROP_FOREIGN_SOURCE, DROP_MALFORMED, DROP_NOT_LOCAL, DROP_NO_ROUTE, DROP_OWN_SUBNET, DROP_TTL, DROP_UNKNOWN_NODE,
} from '../../../../agent/udp/counters.ts';
import { SEND, checkInbound, routeOutbound } from '../../../../agent/udp/forward.ts';
import { internetChecksum, ipv4Dst } from '../../../../agent/udp/ipv4.ts';
import { PeerTable, SENDER_FOREIGN_SOURCE, SENDER_OK, SENDER_UNKNOWN_NODE } from '../../../../agent/udp/peer-table.ts';
import type { Lease } from '../../../../agent/lease/store.ts';
import { packet } from './packets.ts';

const lease = (subnet: string, publicIp: string): Lease => ({ subnet, publicIp, backendType: 'udp', backendData: {}, expiration: 0 });
const ip = (s: string) => s.split('.').reduce((a, x) => a * 256 + Number(x), 0);
const LEASES = [lease('10.244.1.0/24', '192.0.2.11'), lease('10.244.2.0/24', '192.0.2.12'), lease('10.244.2.128/25', '192.0.2.13'), lease('10.244.3.0/24', '192.0.2.13')];
const table = new PeerTable(LEASES, '10.244.1.0/24');
const LOCAL = ip('10.244.1.0');

function route(p: Buffer) {
  const icmp = Buffer.alloc(256);
  const out = { node: 0, icmpLen: 0 };
  const v = routeOutbound(p, 0, p.length, table, LOCAL, icmp, 0, out);
  return { v, out, icmp: icmp.subarray(0, out.icmpLen) };
}

void describe('PeerTable', () => {
  it('longest prefix wins; unknown is -1; own subnet is local', () => {
    assert.equal(table.lookup(ip('10.244.2.5')), ip('192.0.2.12'));
    assert.equal(table.lookup(ip('10.244.2.200')), ip('192.0.2.13'), '/25 beats /24');
    assert.equal(table.lookup(ip('10.244.9.1')), -1);
    assert.equal(table.isLocal(ip('10.244.1.77')), true);
    assert.equal(table.isLocal(ip('10.244.2.77')), false);
    assert.equal(table.size, 4);
  });

  it('checkSender: node must hold a lease, source must be in one of its subnets', () => {
    assert.equal(table.checkSender(ip('192.0.2.13'), ip('10.244.3.9')), SENDER_OK);
    assert.equal(table.checkSender(ip('192.0.2.13'), ip('10.244.2.130')), SENDER_OK);
    assert.equal(table.checkSender(ip('192.0.2.12'), ip('10.244.3.9')), SENDER_FOREIGN_SOURCE);
    assert.equal(table.checkSender(ip('192.0.2.250'), ip('10.244.2.9')), SENDER_UNKNOWN_NODE);
  });
});

void describe('routeOutbound (TUN -> UDP)', () => {
  it('sends to the owner with TTL - 1 and a valid checksum', () => {
    const p = packet('10.244.1.2', '10.244.2.3', { ttl: 64 });
    const { v, out } = route(p);
    assert.equal(v, SEND);
    assert.equal(out.node, ip('192.0.2.12'));
    assert.equal(p[8], 63);
    assert.equal(internetChecksum(p, 0, 20), 0);
  });

  it('no lease: drop with ICMP net unreachable back to the sender', () => {
    const { v, icmp } = route(packet('10.244.1.2', '10.250.0.9'));
    assert.equal(v, DROP_NO_ROUTE);
    assert.equal(icmp.length, 56);
    assert.deepEqual([icmp[20], icmp[21]], [3, 0]);
    assert.equal(ipv4Dst(icmp, 0), ip('10.244.1.2'));
  });

  it('TTL 1: drop with ICMP time exceeded; TTL 1 ICMP error: no answer', () => {
    const { v, icmp } = route(packet('10.244.1.2', '10.244.2.3', { ttl: 1 }));
    assert.equal(v, DROP_TTL);
    assert.deepEqual([icmp[20], icmp[21]], [11, 0]);
    const r = route(packet('10.244.1.2', '10.244.2.3', { ttl: 1, payload: Buffer.from('0b00000000000000', 'hex') }));
    assert.equal(r.v, DROP_TTL);
    assert.equal(r.out.icmpLen, 0);
  });

  it('malformed and own-subnet packets are dropped silently', () => {
    assert.equal(route(Buffer.from('6000000000000000000000000000000000000000', 'hex')).v, DROP_MALFORMED);
    const r = route(packet('10.244.1.2', '10.244.1.3'));
    assert.equal(r.v, DROP_OWN_SUBNET);
    assert.equal(r.out.icmpLen, 0);
  });
});

void describe('checkInbound (UDP -> TUN)', () => {
  const check = (p: Buffer, from: string) => checkInbound(p, 0, p.length, ip(from), table);
  it('admits a lease holder sending from its subnet to ours', () => {
    assert.equal(check(packet('10.244.2.3', '10.244.1.2'), '192.0.2.12'), SEND);
  });
  it('drops strangers, spoofed sources, relays and garbage', () => {
    assert.equal(check(packet('10.244.2.3', '10.244.1.2'), '192.0.2.250'), DROP_UNKNOWN_NODE);
    assert.equal(check(packet('10.244.3.3', '10.244.1.2'), '192.0.2.12'), DROP_FOREIGN_SOURCE);
    assert.equal(check(packet('10.244.2.3', '10.244.3.2'), '192.0.2.12'), DROP_NOT_LOCAL);
    assert.equal(check(Buffer.from('450000', 'hex'), '192.0.2.12'), DROP_MALFORMED);
  });
});
