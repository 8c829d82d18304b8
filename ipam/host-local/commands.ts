// host-local ADD, DEL and CHECK. They run in the runtime's netns and never enter the pod's
// (CNI_NETNS is not needed: IPAM only touches files under the data dir).
import type { CmdArgs } from '../../lib/cni/skel.ts';
import { CniError, unknownContainer } from '../../lib/cni/errors.ts';
import type { Result } from '../../lib/cni/types.ts';
import { decodeForDel, stringAt, validateConfig } from '../../lib/cni/validate.ts';
import { validateNetworkName } from '../../lib/cni/ids.ts';
import { formatIp, normalizeIp, parseCidr } from '../../lib/ip/index.ts';
import { validate } from '../../gen/validators/host-local.js';
import { allocate, checkRequested, findAttachment, releaseAttachment } from './allocator.ts';
import type { Attachment } from './allocator.ts';
import { parseHostLocalConfig } from './config.ts';
import type { HostLocalConfig, HostLocalNetConf } from './config.ts';
import { DEFAULT_DATA_DIR } from '../../lib/attach/host-local-files.ts';
import { rangeFor } from './range.ts';
import { readResolvConf } from './resolv-conf.ts';
import type { Store } from './store.ts';

/**
 * Opens the store for network `name` under `dataDir`. With `create` the disk store makes
 * <dataDir>/<name> and its lock file; without, it returns null when they do not exist (nothing held).
 */
export type OpenStore = (dataDir: string, name: string, create: boolean, lockTimeoutMs?: number) => Store | null;

function attachment(args: CmdArgs): Attachment {
  return { containerId: args.containerId, ifname: args.ifName };
}

/** Runs fn on the store (created when missing), closing it afterwards. */
export function withStore<T>(open: OpenStore, dataDir: string, name: string, fn: (s: Store) => T): T {
  const store = open(dataDir, name, true);
  if (store === null) throw new Error(`store ${dataDir}/${name} could not be created`);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** What validateAdd found: the normalised config and the dns settings read from resolvConf. */
export interface ValidatedAdd {
  conf: HostLocalConfig;
  dns: NonNullable<Result['dns']>;
}

// A delegating plugin that runs host-local in-process calls validateAdd, then ADD, with the same
// decoded config object (runDecoded hands it on unchanged) and CNI_ARGS: ADD reuses that outcome
// instead of decoding the IPAM section and reading resolv.conf a second time. Successes only.
const validated = new WeakMap<object, { cniArgs: string; out: ValidatedAdd }>();

/**
 * Everything ADD reads, checked without touching the data dir (runs in any netns): the config, CNI_ARGS,
 * the requested addresses against the ranges, resolv.conf. Returns the config and the dns it read.
 * A delegating plugin (bridge) calls it through Plugin.validateAdd before its first change to the node.
 */
export function validateAdd(args: CmdArgs): ValidatedAdd {
  const seen = validated.get(args.config);
  if (seen !== undefined && seen.cniArgs === args.args) return seen.out;
  const conf = parseHostLocalConfig(args.config, args.args);
  checkRequested(conf.rangeSets, conf.requestedIps);
  const out = { conf, dns: conf.resolvConf ? readResolvConf(conf.resolvConf) : {} };
  validated.set(args.config, { cniArgs: args.args, out });
  return out;
}

/** ADD: one address per range set; result with ips (prefix of the range's subnet, its gateway), routes, dns. */
export function cmdAdd(args: CmdArgs, open: OpenStore): Result {
  const { conf, dns } = validateAdd(args);
  const got = withStore(open, conf.dataDir, conf.name, (s) => allocate(s, conf.rangeSets, attachment(args), conf.requestedIps));
  const result: Result = {
    ips: got.map((g) => ({ address: `${formatIp(g.ip)}/${g.range.subnet.prefix}`, gateway: formatIp(g.range.gateway) })),
  };
  if (conf.routes.length > 0) result.routes = conf.routes;
  result.dns = dns;
  return result;
}

/**
 * DEL: frees what the attachment holds (reference matching rules). Needs only `name` and
 * `ipam.dataDir` from the config, so a config whose ranges changed or broke still releases.
 * Nothing held, or no directory at all, is success; nothing is created then.
 */
export function cmdDel(args: CmdArgs, open: OpenStore): void {
  const { name, dataDir } = delLocation(args);
  if (name === undefined) return; // no network name: no store to look in
  const store = open(dataDir, name, false);
  if (store === null) return;
  try {
    releaseAttachment(store, attachment(args));
  } finally {
    store.close();
  }
}

/**
 * Where DEL looks: the network name and ipam.dataDir as ADD reads them, or, when ADD would refuse the
 * config (DEL never blocks cleanup), whatever of the two still reads as a string.
 */
function delLocation(args: CmdArgs): { name: string | undefined; dataDir: string } {
  try {
    const conf = validateConfig<HostLocalNetConf>(validate, args.config);
    return { name: validateNetworkName(conf.name), dataDir: conf.ipam.dataDir ?? DEFAULT_DATA_DIR };
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    const doc = decodeForDel(validate, args.config);
    let name = stringAt(doc, 'name');
    try {
      if (name !== undefined) name = validateNetworkName(name);
    } catch {
      name = undefined; // not a name a store could have been made under
    }
    const dir = stringAt(doc, 'ipam', 'dataDir');
    return { name, dataDir: dir !== undefined && dir.startsWith('/') ? dir : DEFAULT_DATA_DIR };
  }
}

/**
 * CHECK: the attachment holds at least one address (as the reference checks), and every address of
 * prevResult that lies in our range sets is held by this attachment.
 */
export function cmdCheck(args: CmdArgs, open: OpenStore): void {
  const conf = parseHostLocalConfig(args.config, args.args);
  const at = attachment(args);
  const held = withStore(open, conf.dataDir, conf.name, (s) => findAttachment(s, at));
  if (held.length === 0) {
    throw unknownContainer(`host-local: failed to find address added by container ${at.containerId}`, `interface ${at.ifname}, network ${conf.name}`);
  }
  const mine = new Set(held.map((h) => formatIp(h.ip)));
  for (const ip of args.prevResult?.ips ?? []) {
    const c = parseCidr(ip.address);
    if (c === null) continue;
    const addr = normalizeIp(c.addr);
    if (!conf.rangeSets.some((set) => rangeFor(set, addr))) continue; // another IPAM's address
    if (!mine.has(formatIp(addr))) {
      throw unknownContainer(`host-local: address ${formatIp(addr)} of prevResult is not held by container ${at.containerId}`, `interface ${at.ifname}, network ${conf.name}`);
    }
  }
}
