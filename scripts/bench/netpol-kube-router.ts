// kube-router v2.1.0's ipset names, as the netpol bench polls them (runs in the bench process, pure).
import { createHash } from 'node:crypto';

/** kube-router v2.1.0's ipset of an ingress rule's pod peers (policyIndexedSourcePodIPSetName, pkg/controllers/netpol/policy.go). */
export function kubeRouterSrcSet(ns: string, policy: string, rule: number): string {
  return `KUBE-SRC-${base32(createHash('sha256').update(`${ns}${policy}ingressrule${rule}IPv4pod`).digest()).slice(0, 16)}`;
}

/** kube-router v2.1.0's ipset of a policy's target pods (policyDestinationPodIPSetName). */
export function kubeRouterDstSet(ns: string, policy: string): string {
  return `KUBE-DST-${base32(createHash('sha256').update(`${ns}${policy}IPv4`).digest()).slice(0, 16)}`;
}

/** RFC 4648 base32 (Go's base32.StdEncoding), padding left out (only a prefix is used). */
function base32(b: Uint8Array): string {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let v = 0;
  let out = '';
  for (const x of b) {
    v = (v << 8) | x;
    bits += 8;
    while (bits >= 5) {
      out += A[(v >>> (bits - 5)) & 31];
      bits -= 5;
    }
    v &= (1 << bits) - 1;
  }
  return bits > 0 ? out + A[(v << (5 - bits)) & 31] : out;
}
