// CNI spec types: network configuration and results for every version we speak (0.1.0 .. 1.1.0).
// The internal result form is the 1.1.0 shape; lib/cni/version.ts converts to and from the others.

/** Every CNI spec version weft plugins can speak, oldest first. */
export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;

/** One of SUPPORTED_VERSIONS. */
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];

/** The newest version: the shape of internal results and the default of VERSION output. */
export const CURRENT_VERSION: CniVersion = '1.1.0';

/** CNI_COMMAND values defined by the spec (1.1.0 adds GC and STATUS). */
export type Command = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';

/** DNS settings, in configs and results alike (spec "dns" object). */
export interface Dns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

/** The `ipam` section: only `type` is defined by the spec; the rest belongs to the IPAM plugin. */
export interface IpamConf {
  type: string;
  [key: string]: unknown;
}

/**
 * A plugin's network configuration as it arrives on stdin (raw JSON object). Known keys are typed;
 * everything else is the plugin's own and is checked by its JSON Schema.
 */
export interface NetConf {
  cniVersion?: string;
  name: string;
  type: string;
  ipam?: IpamConf;
  dns?: Dns;
  /** The previous plugin's (or cached) result, in the config's cniVersion. */
  prevResult?: unknown;
  runtimeConfig?: Record<string, unknown>;
  args?: Record<string, unknown>;
  capabilities?: Record<string, boolean>;
  [key: string]: unknown;
}

/** Result interface, 1.1.0 shape. mac is '' when the interface has none (omitted on output). */
export interface Interface {
  name: string;
  mac: string;
  /** 1.1.0 only. */
  mtu?: number;
  /** Path of the netns holding the interface; absent for host-side interfaces. */
  sandbox?: string;
  /** 1.1.0 only: a userspace socket (e.g. vhost-user). */
  socketPath?: string;
  /** 1.1.0 only: PCI address of a device. */
  pciID?: string;
}

/** Result IP, 1.0.0/1.1.0 shape: address is a CIDR ("10.1.2.3/24"); interface indexes `interfaces`. */
export interface IpConfig {
  address: string;
  gateway?: string;
  interface?: number;
}

/** Result route, 1.1.0 shape (mtu..scope are 1.1.0 only). */
export interface Route {
  dst: string;
  gw?: string;
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}

/** Internal (current, 1.1.0) result. cniVersion is ignored here: formatResult sets it on output. */
export interface Result {
  cniVersion?: string | undefined;
  interfaces?: Interface[];
  ips?: IpConfig[];
  routes?: Route[];
  dns?: Dns;
}

/** 0.3.0 .. 1.0.0 interface: no mtu/socketPath/pciID. */
export interface Interface10 {
  name: string;
  mac?: string;
  sandbox?: string;
}

/** 0.3.0 .. 1.0.0 route: dst and gw only. */
export interface Route10 {
  dst: string;
  gw?: string;
}

/** 1.0.0 result. */
export interface Result10 {
  cniVersion: string;
  interfaces?: Interface10[];
  ips?: IpConfig[];
  routes?: Route10[];
  dns?: Dns;
}

/** 0.3.x/0.4.0 IP: carries its family as "4" or "6" (dropped in 1.0.0). */
export interface IpConfig04 extends IpConfig {
  version: '4' | '6';
}

/** 0.3.0, 0.3.1 and 0.4.0 result. */
export interface Result04 {
  cniVersion: string;
  interfaces?: Interface10[];
  ips?: IpConfig04[];
  routes?: Route10[];
  dns?: Dns;
}

/** 0.1.0/0.2.0 per-family IP block. */
export interface IpConfig02 {
  ip: string;
  gateway?: string;
  routes?: Route10[];
}

/** 0.1.0 and 0.2.0 result: at most one IPv4 and one IPv6 address. */
export interface Result02 {
  cniVersion: string;
  ip4?: IpConfig02;
  ip6?: IpConfig02;
  dns?: Dns;
}

/** A result in any supported version's wire form. */
export type AnyResult = Result | Result10 | Result04 | Result02;

/** Error document printed on stdout (spec "Error" section). */
export interface ErrorDocument {
  cniVersion: string;
  code: number;
  msg: string;
  details?: string;
}

/** VERSION output. */
export interface VersionDocument {
  cniVersion: string;
  supportedVersions: string[];
}
