// DEL: forgiving on purpose. Works without CNI_NETNS, without prevResult, after the netns is gone and
// after an ADD killed at any point: each step treats "already gone" as done.
import { CniError, ErrorCode, toCniError } from '../../lib/cni/errors.ts';
import { validatePluginType } from '../../lib/cni/find-plugin.ts';
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { IpamConf } from '../../lib/cni/types.ts';
import { decodeForDel, stringAt } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/bridge.js';
import { isNotFound } from '../../lib/netlink/errors.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { parseBridgeConfig } from './config.ts';
import { ipamDel } from './ipam.ts';
import { teardownMacSpoof } from './macspoof.ts';
import { teardownMasq } from './masquerade.ts';
import { attachmentAlias, hostVethName } from '../../lib/attach/bridge-veth.ts';
import { isPodGone, openPodNs } from '../../lib/pod/netns.ts';
import { teardownLinkByName, teardownVethByAlias, teardownVethByName } from './veth.ts';

/** Removes the pod's interface in its netns; false when the netns is gone or there was no such link. */
function teardownPodLink(netns: string, ifName: string): boolean {
  let pod;
  try {
    pod = openPodNs(netns);
  } catch (e) {
    if (isPodGone(e)) return false;
    throw e;
  }
  try {
    return teardownLinkByName(pod.rtnl, ifName);
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  } finally {
    pod.close();
  }
}

/** What DEL needs of the config; read leniently when ADD would refuse it. */
interface DelConfig {
  name: string;
  ipMasq: boolean;
  macSpoofChk: boolean;
  ipam: IpamConf | undefined;
}

/**
 * The config as DEL reads it: parsed as ADD parses it, or, when that refuses (unknown values, wrong
 * types, out-of-range numbers), just the network name and ipam.type, so DEL never blocks cleanup.
 */
function delConfig(a: CmdArgs): DelConfig {
  try {
    const c = parseBridgeConfig(a);
    return { name: c.name, ipMasq: c.ipMasq, macSpoofChk: c.macSpoofChk, ipam: c.ipam };
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    const doc = decodeForDel(validate, a.config);
    let type = stringAt(doc, 'ipam', 'type');
    try {
      if (type !== undefined) validatePluginType(type);
    } catch {
      type = undefined; // no plugin can be found under such a name: nothing it could hold
    }
    log.warn('DEL with a config ADD would refuse: releasing what can be found', { error: e.msg, details: e.details });
    return { name: stringAt(doc, 'name') ?? '', ipMasq: false, macSpoofChk: false, ipam: type === undefined ? undefined : { type } };
  }
}

/**
 * The pod addresses of prevResult when it is this attachment's result (its interface `ifName` in the
 * pod netns): the masquerade elements are then deleted by key. Any other prevResult (missing, foreign)
 * gives undefined, and the elements are found by their comment instead, so another pod's are never hit.
 */
function ownIps(a: CmdArgs): string[] | undefined {
  const prev = a.prevResult;
  const mine = prev?.interfaces?.findIndex((i) => i.name === a.ifName && i.sandbox !== undefined && i.sandbox !== '' && (a.netns === '' || i.sandbox === a.netns));
  if (prev === undefined || mine === undefined || mine < 0) return undefined;
  const ips = (prev.ips ?? []).filter((ip) => ip.interface === mine).map((ip) => ip.address);
  return ips.length > 0 ? ips : undefined;
}

// A step whose kernel objects may not exist (a config that never enabled it, no nf_tables): best effort.
function bestEffort(what: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    log.warn(`DEL: ${what} not released`, { error: (e as Error).message });
  }
}

/** DEL, run in the node netns: masquerade and macspoofchk elements, the veth pair, then the IPAM lease (so the address is freed last). */
export async function cmdDel(a: CmdArgs): Promise<void> {
  const cfg = delConfig(a);
  const spec = { network: cfg.name, containerId: a.containerId, ifName: a.ifName };
  // Elements are found by their comment, so they go even when the config now says ipMasq/macspoofchk
  // false (changed since ADD): before IPAM DEL, since a freed address may be taken by the next ADD.
  const prevIps = ownIps(a);
  const masq = (): void => teardownMasq(prevIps !== undefined && prevIps.length > 0 ? { ...spec, podCidrs: prevIps } : spec);
  // A stalled nft (code 11) must not keep the veth and the address: the rest goes, then 11 asks for a retry.
  let stalled: CniError | undefined;
  if (cfg.ipMasq) {
    try {
      masq();
    } catch (e) {
      const err = toCniError(e);
      if (err.code !== ErrorCode.tryAgainLater) throw e;
      stalled = err;
    }
  }
  else bestEffort('masquerade elements', masq);
  if (cfg.macSpoofChk) teardownMacSpoof(spec);
  else bestEffort('macspoofchk elements', () => teardownMacSpoof(spec));
  const removed = a.netns !== '' && teardownPodLink(a.netns, a.ifName);
  if (!removed) {
    // No pod side to go through: find the host end by its computed name, then (veths with random
    // `veth` names) by its alias; none is left when the pair went with the netns.
    const host = Rtnl.open();
    try {
      const name = hostVethName(cfg.name, a.containerId, a.ifName);
      if (!teardownVethByName(host, name, attachmentAlias(a.containerId, a.ifName))) teardownVethByAlias(host, a.containerId, a.ifName);
    } finally {
      host.close();
    }
  }
  if (cfg.ipam !== undefined) await ipamDel(a, cfg);
  if (stalled !== undefined) throw stalled;
}
