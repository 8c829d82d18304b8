// The flannel-vxlan plugin object: flannel's CNI semantics, plus making sure the VTEP exists (from
// the spec weftd left next to subnet.env) when weftd has not (re)created it yet.
import type { Plugin } from '../../lib/cni/plugin.ts';
import { Rtnl } from '../../lib/netlink/index.ts';
import { makeFlannelPlugin } from '../flannel/commands.ts';
import { ensureVtep, readVtepSpec, vtepSpecPath } from '../../lib/flannel/vtep.ts';

/** Idempotent, in the runtime's (node's) netns: the VTEP weftd described exists and is up. */
function ensureVtepFromSpec(subnetFile: string): void {
  const spec = readVtepSpec(vtepSpecPath(subnetFile));
  if (spec === null) return; // weftd never ran here with vxlan: nothing to replay
  const rtnl = Rtnl.open();
  try {
    const link = rtnl.getLink(spec.name);
    // Only a missing or down device is repaired here; anything subtler is weftd's job.
    if (link === null || !link.up) ensureVtep(rtnl, spec);
  } finally {
    rtnl.close();
  }
}

/** flannel-vxlan: bridge + host-local delegate rendered from subnet.env, VTEP ensured. */
export const flannelVxlanPlugin: Plugin = makeFlannelPlugin('flannel-vxlan', {
  beforeAdd: (cfg) => ensureVtepFromSpec(cfg.subnetFile),
});
