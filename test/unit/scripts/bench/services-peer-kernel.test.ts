// sepChain: the side-by-side Service benchmark finds kube-proxy iptables mode's endpoint chain by the name kube-proxy gives it (no root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sepChain } from '../../../../scripts/bench/services-peer-kernel.ts';

void test('sepChain: the chain name the real kube-proxy v1.34.4 (iptables mode) gave this endpoint', () => {
  // Read from `iptables-save -t nat` in a benchmark run: default/s0:http -> 10.150.0.0:8080.
  assert.equal(sepChain('default/s0:http', '10.150.0.0:8080'), 'KUBE-SEP-5DNSFMK7R4BKSPL4');
});

void test('sepChain: another endpoint or port name is another chain, always 16 base32 characters', () => {
  const a = sepChain('default/s0:http', '10.150.0.1:8080');
  assert.notEqual(a, 'KUBE-SEP-5DNSFMK7R4BKSPL4');
  assert.notEqual(sepChain('default/s0:alt', '10.150.0.0:8080'), 'KUBE-SEP-5DNSFMK7R4BKSPL4');
  assert.match(a, /^KUBE-SEP-[A-Z2-7]{16}$/);
});
