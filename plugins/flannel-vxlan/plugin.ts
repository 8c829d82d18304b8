// The flannel-vxlan plugin object: flannel's CNI semantics, plus making sure the VTEP exists (from
// the spec weftd left next to subnet.env) when weftd has not (re)created it yet.
import type { Plugin } from '../../lib/cni/plugin.ts';
import { makeFlannelPlugin } from '../../lib/flannel-cni/commands.ts';
import { ensureVtepFromSpec } from '../../lib/flannel-cni/vtep-replay.ts';

/** flannel-vxlan: bridge + host-local delegate rendered from subnet.env, VTEP ensured. */
export const flannelVxlanPlugin: Plugin = makeFlannelPlugin('flannel-vxlan', {
  beforeAdd: (cfg) => ensureVtepFromSpec(cfg.subnetFile),
});
