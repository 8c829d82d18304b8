// STATUS (CNI 1.1) of the flannel plugins (flannel, flannel-vxlan, host-gw, flannel-udp), run in the
// runtime's (node's) netns: not ready (code 50) while the node has no subnet lease, which is to say
// while subnet.env (written by weftd once it holds the lease) is missing or incomplete; then the
// STATUS of the delegate rendered from it (bridge, which asks host-local). containerd 2 and CRI-O
// report the node's network not ready on any failure, so kubelet keeps the node NotReady until
// weftd holds its subnet.
import { delegateStatus } from '../cni/delegate.ts';
import { CniError, ErrorCode } from '../cni/errors.ts';
import type { CmdArgs } from '../cni/plugin.ts';
import { readFlannelSubnetFile, type FlannelEnv } from '../flannel/subnet-file.ts';
import { normalizeFlannelConfig } from './config.ts';
import { renderDelegate } from './render.ts';

/** subnet.env, or code 50 with the reason the file gave (missing, incomplete, unreadable). */
function leaseOrNotReady(path: string): FlannelEnv {
  try {
    return readFlannelSubnetFile(path);
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    throw new CniError(ErrorCode.pluginNotAvailable, `not ready: this node holds no subnet lease yet (${e.msg})`, e.details, { cause: e });
  }
}

/** STATUS: code 7 for a bad config, 50 without a lease, else the rendered delegate's STATUS. */
export async function cmdStatus(a: CmdArgs): Promise<void> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  const env = leaseOrNotReady(cfg.subnetFile);
  const conf = renderDelegate(cfg, env);
  const type = typeof conf['type'] === 'string' ? conf['type'] : 'bridge';
  await delegateStatus(type, Buffer.from(JSON.stringify(conf)), a.env);
}
