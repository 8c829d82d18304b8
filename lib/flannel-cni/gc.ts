// GC (CNI 1.1) of the flannel plugins, run in the runtime's (node's) netns: the runtime sends GC to
// the conflist's plugins only, and the bridge and host-local that hold a flannel pod's veth and
// address are flannel's delegate, so GC is passed on to the delegate rendered from subnet.env with
// the runtime's list of valid attachments. Without a lease there is no delegate config to render:
// nothing is collected then (a warning says so), and the next GC does it.
import { delegateGc } from '../cni/delegate.ts';
import { CniError, invalidConfig } from '../cni/errors.ts';
import { log } from '../cni/log.ts';
import type { CmdArgs } from '../cni/plugin.ts';
import { readFlannelSubnetFile } from '../flannel/subnet-file.ts';
import { normalizeFlannelConfig } from './config.ts';
import { renderDelegate } from './render.ts';

/** The spec's key, and the name libcni also sends it under (containernetworking/cni#1101). */
const GC_KEYS = ['cni.dev/valid-attachments', 'cni.dev/attachments'] as const;

/** GC: code 7 for a bad config or no valid-attachments list, else the rendered delegate's GC. */
export async function cmdGc(a: CmdArgs): Promise<void> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  const raw = a.config as Record<string, unknown>;
  if (!Array.isArray(raw['cni.dev/valid-attachments'])) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments', `got ${typeof raw['cni.dev/valid-attachments']}`);
  let conf: Record<string, unknown>;
  try {
    conf = renderDelegate(cfg, readFlannelSubnetFile(cfg.subnetFile));
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    log.warn('no subnet lease: the delegate has no config to collect with; nothing collected', { subnetFile: cfg.subnetFile, error: e });
    return;
  }
  for (const k of GC_KEYS) if (raw[k] !== undefined) conf[k] = raw[k];
  const type = typeof conf['type'] === 'string' ? conf['type'] : 'bridge';
  await delegateGc(type, Buffer.from(JSON.stringify(conf)), a.env);
}
