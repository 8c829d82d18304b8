// kube-proxy's chain names: the side-by-side Service benchmark probes kube-proxy's chains by the names kube-proxy gives them (no root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nftEndpointChain, nftServiceChain, sepChain, svcChain } from '../../../../scripts/bench/services-peer-chains.ts';

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

// Expected values from kube-proxy v1.34.4's formulas (pkg/proxy/{iptables,nftables}/proxier.go) run
// in Go (crypto/sha256, base32.StdEncoding): a check of this file's base32 against Go's.
void test('svcChain: KUBE-SVC- and 16 base32 characters of sha256(port name + protocol)', () => {
  assert.equal(svcChain('default/s0:http'), 'KUBE-SVC-KUAVVFRKMKFBN3GL');
});

void test('nftServiceChain / nftEndpointChain: 8 hash characters, a dash, the readable name', () => {
  assert.equal(nftServiceChain('default', 's4999', 'http'), 'service-V54O73RO-default/s4999/tcp/http');
  assert.equal(nftEndpointChain('default', 's3', 'http', '10.150.0.7', 8080), 'endpoint-MH5JFTBX-default/s3/tcp/http__10.150.0.7/8080');
  assert.notEqual(nftEndpointChain('default', 's3', 'http', '10.150.0.8', 8080).slice(9, 17), 'MH5JFTBX');
});
