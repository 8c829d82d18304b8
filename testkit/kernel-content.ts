// A Service table listing (KernelContent) with plain Maps throughout, for tests that compare what
// two listings hold: weftd keeps hairpin pairs and endpoint slots in Map subclasses with packed
// storage (agent/services/listed.ts), whose inner layout depends on the order elements came in.
import type { KernelContent } from '../agent/services/content.ts';

/** `k`'s content as plain Maps and Sets. */
export function plainKernelContent(k: KernelContent): KernelContent {
  return {
    chains: new Map(k.chains),
    allChains: new Set(k.allChains),
    affinity: new Map([...k.affinity].map(([n, a]) => [n, { clients: new Map(a.clients) }])),
    elements: new Map([...k.elements].map(([n, m]) => [n, new Map(m)])),
    epMaps: new Map([...k.epMaps].map(([n, m]) => [n, new Map(m)])),
  };
}
