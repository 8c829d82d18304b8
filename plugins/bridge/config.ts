// Bridge configuration: stdin config + CNI_ARGS -> typed, normalised BridgeConfig. Schema first (code 7
// naming the field), then the reference's cross-field rules. Runs before anything is touched.
import { parseCniArgs } from '../../lib/cni/args.ts';
import { invalidConfig, unsupportedField } from '../../lib/cni/errors.ts';
import { validateIfName } from '../../lib/cni/ids.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Dns, IpamConf, NetConf } from '../../lib/cni/types.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { canonicalCidr, formatCidr, parseCidr } from '../../lib/ip/index.ts';
import { validate } from '../../gen/validators/bridge.js';

/** The reference's default bridge name. */
export const DEFAULT_BRIDGE = 'cni0';
/** Smallest MTU we accept: the IPv4 minimum (RFC 791); IPv6 needs 1280 and the kernel enforces that itself. */
export const MIN_MTU = 68;

/** The raw keys the schema guarantees. */
interface BridgeNetConf extends NetConf {
  bridge?: string;
  isGateway?: boolean;
  isDefaultGateway?: boolean;
  forceAddress?: boolean;
  ipMasq?: boolean;
  ipMasqBackend?: string;
  mtu?: number;
  hairpinMode?: boolean;
  promiscMode?: boolean;
  enabledad?: boolean;
  macspoofchk?: boolean;
  vlan?: number;
  vlanTrunk?: unknown[];
  preserveDefaultVlan?: boolean;
  disableContainerInterface?: boolean;
  portIsolation?: boolean;
  weftMasqExempt?: string[];
  runtimeConfig?: { mac?: string };
  args?: { cni?: { mac?: string } };
}

/** The normalised config every verb works from. */
export interface BridgeConfig {
  name: string;
  cniVersion: string;
  bridge: string;
  isGateway: boolean;
  isDefaultGateway: boolean;
  forceAddress: boolean;
  ipMasq: boolean;
  /** weftMasqExempt: destination networks (canonical CIDRs) the masquerade never applies to, besides the pod's own subnet. */
  masqExempt: string[];
  /** 0: leave the kernel's default (1500 for a new veth/bridge). */
  mtu: number;
  hairpinMode: boolean;
  promiscMode: boolean;
  enableDad: boolean;
  macSpoofChk: boolean;
  /** 0: no VLAN. */
  vlan: number;
  /** The pod interface's MAC, from CNI_ARGS MAC=, then args.cni.mac, then runtimeConfig.mac (later wins). */
  mac: string | undefined;
  ipam: IpamConf | undefined;
  dns: Dns | undefined;
}

/** Parses and checks the config of one invocation (code 7 for bad values, 2 for unsupported ones, 4 for bad CNI_ARGS). */
export function parseBridgeConfig(a: Pick<CmdArgs, 'config' | 'args' | 'cniVersion'>): BridgeConfig {
  const c = validateConfig<BridgeNetConf>(validate, a.config);
  const bridge = validateIfName(c.bridge ?? DEFAULT_BRIDGE, { source: 'config', field: 'bridge' });
  const mtu = c.mtu ?? 0;
  if (mtu !== 0 && mtu < MIN_MTU) throw invalidConfig(`invalid configuration: mtu must be at least ${MIN_MTU}`, `mtu = ${mtu}`);
  if (c.hairpinMode === true && c.promiscMode === true) {
    throw invalidConfig('invalid configuration: cannot set hairpin mode and promiscuous mode at the same time', 'hairpinMode and promiscMode are both true');
  }
  rejectUnsupported(c);
  const isDefaultGateway = c.isDefaultGateway ?? false;
  return {
    name: c.name,
    cniVersion: a.cniVersion,
    bridge,
    // isDefaultGateway implies isGateway, as in the reference.
    isGateway: (c.isGateway ?? false) || isDefaultGateway,
    isDefaultGateway,
    forceAddress: c.forceAddress ?? false,
    ipMasq: c.ipMasq ?? false,
    masqExempt: normalizeMasqExempt(c.weftMasqExempt ?? []),
    mtu,
    hairpinMode: c.hairpinMode ?? false,
    promiscMode: c.promiscMode ?? false,
    enableDad: c.enabledad ?? false,
    macSpoofChk: c.macspoofchk ?? false,
    vlan: c.vlan ?? 0,
    mac: pickMac(c, a.args),
    ipam: c.ipam,
    dns: c.dns,
  };
}

/** Keys of newer reference releases (or backends) we do not implement: code 2 rather than silently ignoring them. */
function rejectUnsupported(c: BridgeNetConf): void {
  // ipMasqBackend ("iptables"/"nftables" in newer references) is accepted: the masquerade it asks for is
  // the same, and weft always does it with nftables.
  for (const key of ['vlanTrunk', 'preserveDefaultVlan', 'disableContainerInterface', 'portIsolation'] as const) {
    const v = c[key];
    if (v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0)) {
      throw unsupportedField(`unsupported field: ${key}`, `${key} = ${JSON.stringify(v)} is not implemented by weft bridge`);
    }
  }
}

/** Each weftMasqExempt entry must be an IPv4 or IPv6 CIDR; host bits are cleared (nft wants the network). */
function normalizeMasqExempt(list: readonly string[]): string[] {
  return list.map((text) => {
    const c = parseCidr(text);
    if (c === null) throw invalidConfig('invalid weftMasqExempt', `${JSON.stringify(text)} is not a CIDR such as "10.244.0.0/16"`);
    return formatCidr(canonicalCidr(c));
  });
}

function pickMac(c: BridgeNetConf, rawArgs: string): string | undefined {
  const envMac = parseCniArgs(rawArgs, { known: ['MAC', 'IP'] })['MAC'];
  let mac: string | undefined;
  if (envMac !== undefined && envMac !== '') {
    if (!/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(envMac)) throw invalidConfig('invalid CNI_ARGS MAC', JSON.stringify(envMac));
    mac = envMac;
  }
  // Reference order: CNI_ARGS, then args.cni.mac, then runtimeConfig.mac; the last one present wins.
  mac = c.args?.cni?.mac ?? mac;
  mac = c.runtimeConfig?.mac ?? mac;
  if (mac === undefined) return undefined;
  const bytes = mac.toLowerCase();
  // A multicast MAC (I/G bit set) cannot be a unicast interface address (the kernel refuses it: EADDRNOTAVAIL).
  if ((parseInt(bytes.slice(0, 2), 16) & 1) === 1) throw invalidConfig('invalid MAC address', `${bytes} is a multicast address`);
  return bytes;
}
