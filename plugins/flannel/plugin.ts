// The `flannel` plugin object: the contract of flannel's own CNI plugin (the type kube-flannel,
// k3s and kubespray write), for whichever backend weftd runs. On a vxlan node it also replays the
// VTEP spec when the device is missing; host-gw and udp need nothing from the plugin.
import type { Plugin } from '../../lib/cni/plugin.ts';
import { makeFlannelPlugin } from '../../lib/flannel-cni/commands.ts';
import { ensureVtepFromSpec } from '../../lib/flannel-cni/vtep-replay.ts';

/** flannel: delegate rendered from subnet.env, stored for DEL; CHECK succeeds as flannel's does. */
export const flannelPlugin: Plugin = makeFlannelPlugin('flannel', {
  beforeAdd: (cfg, env) => ensureVtepFromSpec(cfg.subnetFile, env),
  check: 'none',
});
