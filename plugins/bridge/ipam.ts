// IPAM delegation per the spec (plugin `ipam.type` from CNI_PATH, same env and stdin); a plugin that
// main.ts registered in-process (host-local) runs here when the file found is our own bundle (or the
// standalone executable we run as), saving a second Node start-up, and starts from the config the
// bridge already decoded.
import { delegateAdd, delegateCheck, delegateDel, delegateStatus, delegateValidateAdd } from '../../lib/cni/delegate.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { DecodedConfig } from '../../lib/cni/skel.ts';
import type { Result } from '../../lib/cni/types.ts';
import type { BridgeConfig } from './config.ts';
import { BridgeError } from './errors.ts';
import { CniError, invalidConfig } from '../../lib/cni/errors.ts';

/** What the skeleton decoded from the bridge's stdin, for an in-process IPAM. */
function decoded(a: CmdArgs): DecodedConfig {
  return { config: a.config, cniVersion: a.cniVersion, ...(a.prevResult !== undefined ? { prevResult: a.prevResult } : {}) };
}

function ipamType(cfg: Pick<BridgeConfig, 'ipam'>): string {
  if (cfg.ipam === undefined) throw invalidConfig('invalid configuration: ipam is required', 'the bridge plugin needs an IPAM plugin for pod addresses');
  return cfg.ipam.type;
}

/** IPAM's own ADD checks (config, CNI_ARGS IP=, requested addresses in range), before the node is touched. */
export async function ipamValidate(a: CmdArgs, cfg: BridgeConfig): Promise<void> {
  await delegateValidateAdd(ipamType(cfg), a.stdinData, a.env, decoded(a));
}

/** IPAM ADD: the allocated addresses (at least one), routes and dns. */
export async function ipamAdd(a: CmdArgs, cfg: BridgeConfig): Promise<Result> {
  const r = await delegateAdd(ipamType(cfg), a.stdinData, a.env, decoded(a));
  if (r.ips === undefined || r.ips.length === 0) throw new CniError(BridgeError.badIpamResult, 'IPAM plugin returned missing IP config');
  return r;
}

/** IPAM DEL (forgiving by contract: the IPAM plugin succeeds when nothing is allocated). */
export async function ipamDel(a: CmdArgs, cfg: Pick<BridgeConfig, 'ipam'>): Promise<void> {
  await delegateDel(ipamType(cfg), a.stdinData, a.env, decoded(a));
}

/** IPAM CHECK. */
export async function ipamCheck(a: CmdArgs, cfg: BridgeConfig): Promise<void> {
  await delegateCheck(ipamType(cfg), a.stdinData, a.env, decoded(a));
}

/** IPAM STATUS (1.1.0), on the bridge's own stdin. */
export async function ipamStatus(a: CmdArgs, cfg: Pick<BridgeConfig, 'ipam'>): Promise<void> {
  await delegateStatus(ipamType(cfg), a.stdinData, a.env);
}
