// A policy's requested set filled from the pods of its scope (pure): pod addresses, named ports
// resolved per pod, or an ipBlock's prefixes; desiredPolicy and the model check fill sets with it.
import { elementKey, type TableSet } from '../../lib/netfilter/table-diff.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import { blockElements, hash, PROTOCOLS, scopeKey, type SetRequest } from './compile.ts';
import type { PodInfo } from './types.ts';

/** A requested set filled from the pods of its scope (none for an ipBlock); the model check refills sets with it too. */
export function requestSet(r: SetRequest, pods: readonly PodInfo[]): TableSet {
  const addrType = r.family === 4 ? 'ipv4_addr' : 'ipv6_addr';
  // Pod addresses are canonical texts checked by trimPod: they are their own element keys.
  const ipsOf = (p: PodInfo): string[] => p.ips.filter((ip) => familyOfText(ip) === r.family);
  if (r.kind === 'pods') return { spec: { type: addrType, comment: commentOf(`${scopeKey(r.scope)}${r.family === 6 ? ' ipv6' : ''}`) }, elements: new Set(pods.flatMap(ipsOf)) };
  if (r.kind === 'named') {
    const els = new Set<string>();
    // Resolved per pod: the same name may mean a different number on each pod.
    for (const p of pods) for (const np of p.ports) if (np.name === r.port && PROTOCOLS[np.protocol] === r.proto) for (const ip of ipsOf(p)) els.add(`${ip} . ${r.proto} . ${np.port}`);
    return { spec: { type: [addrType, 'inet_proto', 'inet_service'], comment: commentOf(`${scopeKey(r.scope)} port=${r.port}/${r.proto}${r.family === 6 ? ' ipv6' : ''}`) }, elements: els };
  }
  const norm = blockElements(r.cidrs);
  return { spec: { type: addrType, flags: ['interval'], comment: commentOf(`ipBlock ${norm.join(',')}`) }, elements: new Set(norm.map((c) => elementKey(c))) };
}

function commentOf(s: string): string {
  const clean = s.replace(/[^A-Za-z0-9_.:/@=+,-]+/g, ' ').trim().replace(/\s+/g, ' ');
  return clean.length > 120 ? `${clean.slice(0, 107)} ${hash(s, 12)}` : clean || 'weft';
}
