// host-local's on-disk allocations (<dataDir>/<network>/<ip> holding "<containerID>\r\n<ifname>")
// and the attachments alive on the node, told by the host veth weft's bridge plugin names after
// each attachment (name suffix = FNV-1a of "<containerID>/<ifname>"; alias "weft:<id>/<ifname>").
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fnv1a32 } from '../../lib/hash/fnv.ts';
import type { Link } from '../../lib/netlink/index.ts';

/** One address file. */
export interface Allocation {
  network: string;
  ip: string;
  containerId: string;
  ifName: string;
  path: string;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Every allocation under `dataDir` (all networks); an absent dataDir holds none. */
export function readAllocations(dataDir: string): Allocation[] {
  const out: Allocation[] = [];
  let nets: string[];
  try {
    nets = readdirSync(dataDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return out;
  }
  for (const network of nets.sort()) {
    for (const name of readdirSync(join(dataDir, network)).sort()) {
      if (!IPV4.test(name) && !name.includes(':')) continue;
      const path = join(dataDir, network, name);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      const [containerId = '', ifName = ''] = text.split(/\r?\n/).map((s) => s.trim());
      out.push({ network, ip: name, containerId, ifName, path });
    }
  }
  return out;
}

/** Attachments with a live host veth: alias texts and name suffixes. */
export interface LiveAttachments {
  aliases: Set<string>;
  nameParts: Set<string>;
}

/** Collects the live attachments from the node's links. */
export function liveAttachments(links: readonly Link[]): LiveAttachments {
  const aliases = new Set<string>();
  const nameParts = new Set<string>();
  for (const l of links) {
    if (l.alias?.startsWith('weft:') === true) aliases.add(l.alias);
    if (/^w[0-9a-f]{14}$/.test(l.name)) nameParts.add(l.name.slice(7));
  }
  return { aliases, nameParts };
}

/** Whether attachment `<containerId>/<ifName>` has its host veth on the node. */
export function isLive(live: LiveAttachments, containerId: string, ifName: string): boolean {
  const key = `${containerId}/${ifName}`;
  const h = fnv1a32(key);
  return live.nameParts.has(h) || live.aliases.has(`weft:${key}`) || live.aliases.has(`weft:h${h}`);
}
