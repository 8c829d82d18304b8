// The host-gw plugin object: flannel's CNI semantics; weftd programs the per-node routes.
import type { Plugin } from '../../lib/cni/plugin.ts';
import { makeFlannelPlugin } from '../../lib/flannel-cni/commands.ts';

/** host-gw: bridge + host-local delegate rendered from subnet.env; no device of its own. */
export const hostGwPlugin: Plugin = makeFlannelPlugin('host-gw');
