// Desired content vs what the kernel holds -> the nft commands of one transaction that change only
// what differs: new chains first (map elements and jumps need them), changed chains flushed and
// refilled, elements deleted and added, then chains nobody points to any more removed. Pure.
import { SVC_TABLE, type FixedMapName, type KernelContent, type SvcContent } from './content.ts';
import { FIXED_CHAINS } from './skeleton.ts';

const T = `${SVC_TABLE.family} ${SVC_TABLE.name}`;

/** What a diff found, for logs and metrics. */
export interface SvcPlan {
  commands: string[];
  chainsAdded: number;
  chainsChanged: number;
  chainsDeleted: number;
  elementsAdded: number;
  elementsDeleted: number;
}

function quote(s: string): string {
  return `"${s.replace(/["\\]/g, '')}"`;
}

function elementCmd(verb: 'add' | 'delete', map: string, k: string, v: string): string {
  return `${verb} element ${T} ${map} { ${verb === 'add' && v !== '' ? `${k} : ${v}` : k} }`;
}

/** The commands taking the kernel's content to the desired one (empty when they agree). */
export function diffContent(want: SvcContent, have: KernelContent): SvcPlan {
  const cmds: string[] = [];
  const plan: SvcPlan = { commands: cmds, chainsAdded: 0, chainsChanged: 0, chainsDeleted: 0, elementsAdded: 0, elementsDeleted: 0 };
  const fixed = new Set<string>(FIXED_CHAINS);
  for (const name of want.chains.keys()) {
    if (!have.allChains.has(name)) {
      cmds.push(`add chain ${T} ${name}`);
      plan.chainsAdded++;
    }
  }
  for (const [name, a] of want.affinity) {
    if (!have.affinity.has(name)) {
      const type = a.family === 4 ? 'ipv4_addr : ipv4_addr . inet_service' : 'ipv6_addr : ipv6_addr . inet_service';
      cmds.push(`add map ${T} ${name} { type ${type}; flags dynamic,timeout; timeout ${a.timeoutSeconds}s; }`);
    }
  }
  for (const [name, ch] of want.chains) {
    const cur = have.chains.get(name);
    if (cur === ch.comment) continue;
    if (have.allChains.has(name)) {
      cmds.push(`flush chain ${T} ${name}`);
      plan.chainsChanged++;
    }
    ch.rules.forEach((r, i) => cmds.push(`add rule ${T} ${name} ${r}${i === 0 ? ` comment ${quote(ch.comment)}` : ''}`));
  }
  // Clients pinned to an endpoint that is gone: without this they would keep hitting it until the timeout.
  for (const [name, a] of want.affinity) {
    for (const [client, ep] of have.affinity.get(name)?.clients ?? []) {
      if (!a.endpoints.has(ep)) {
        cmds.push(`delete element ${T} ${name} { ${client} }`);
        plan.elementsDeleted++;
      }
    }
  }
  for (const [map, wantEls] of want.elements) {
    const haveEls = have.elements.get(map) ?? new Map<string, string>();
    for (const [k, v] of haveEls) {
      if (wantEls.get(k) !== v) {
        cmds.push(elementCmd('delete', map, k, v));
        plan.elementsDeleted++;
      }
    }
    for (const [k, v] of wantEls) {
      if (haveEls.get(k) !== v) {
        cmds.push(elementCmd('add', map, k, v));
        plan.elementsAdded++;
      }
    }
  }
  // Chains to remove: every one of ours that is not wanted. Flushed first (they may jump to each other), then deleted.
  const stale = [...have.allChains].filter((n) => !fixed.has(n) && !want.chains.has(n));
  for (const n of stale) cmds.push(`flush chain ${T} ${n}`);
  for (const n of stale) cmds.push(`delete chain ${T} ${n}`);
  plan.chainsDeleted = stale.length;
  for (const name of have.affinity.keys()) if (!want.affinity.has(name)) cmds.push(`delete map ${T} ${name}`);
  return plan;
}

/** The kernel content after `want` was applied in full (so the next diff needs no listing). */
export function assumeApplied(want: SvcContent): KernelContent {
  const elements = new Map<FixedMapName, Map<string, string>>();
  for (const [k, v] of want.elements) elements.set(k, new Map(v));
  return {
    chains: new Map([...want.chains].map(([n, c]) => [n, c.comment])),
    elements,
    // Client elements are the packet path's: unknown without a listing, and only ever pruned.
    affinity: new Map([...want.affinity.keys()].map((n) => [n, { clients: new Map<string, string>() }])),
    allChains: new Set([...FIXED_CHAINS, ...want.chains.keys()]),
  };
}
