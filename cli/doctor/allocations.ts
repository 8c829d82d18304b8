// host-local's allocations as the doctor shows them, read through the one reader of host-local's
// files (lib/attach/host-local-list.ts), so what doctor reports is what the plugin wrote. Runs in any netns.
import { listAllHeld } from '../../lib/attach/host-local-list.ts';

/** One address file; `ifName` is '' for a legacy (ID-only) file. */
export interface Allocation {
  network: string;
  ip: string;
  containerId: string;
  ifName: string;
  path: string;
}

/** Every allocation under `dataDir` (all networks, sorted); an absent dataDir holds none. */
export function readAllocations(dataDir: string): Allocation[] {
  return listAllHeld(dataDir).map((h) => ({ network: h.network, ip: h.ip, containerId: h.containerId, ifName: h.ifname ?? '', path: h.path }));
}
