// The flannel CNI config as flannel's own plugin reads it: subnetFile, dataDir, delegate, ipam.
// Runtime-injected keys (runtimeConfig, args, prevResult) are passed on to the delegate untouched.
import { normalizeKeys, type FieldTree } from '../cni/decode.ts';
import { invalidConfig } from '../cni/errors.ts';
import { validateContainerId } from '../cni/ids.ts';
import type { NetConf } from '../cni/types.ts';

/** Where weftd writes subnet.env (flannel's default path). */
export const DEFAULT_SUBNET_FILE = '/run/flannel/subnet.env';
/** Where the rendered delegate configs are kept (flannel's default path). */
export const DEFAULT_DATA_DIR = '/var/lib/cni/flannel';

/** The normalised flannel plugin config. */
export interface FlannelConfig {
  name: string;
  cniVersion: string;
  subnetFile: string;
  dataDir: string;
  /** The delegate's keys as configured (type defaults to bridge when rendering). */
  delegate: Record<string, unknown>;
  /** Keys merged into the delegate's IPAM section (e.g. dataDir, or extra routes). */
  ipam: Record<string, unknown>;
  /** The whole stdin object, for runtime-injected keys. */
  raw: NetConf;
}

/** flannel's NetConf fields (flannel.go): matched case-insensitively as Go does; delegate and ipam are Go maps, kept as written. */
const FLANNEL_FIELDS: FieldTree = { p: { subnetFile: {}, dataDir: {}, delegate: {}, ipam: {}, runtimeConfig: {} } };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function absPath(conf: NetConf, key: string, dflt: string): string {
  const v = conf[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !v.startsWith('/') || v.includes('\0')) {
    throw invalidConfig(`invalid ${key}`, `${JSON.stringify(v)} must be an absolute path`);
  }
  return v;
}

/** Validates the keys flannel's plugin knows; errors are code 7 naming the key and value. */
export function normalizeFlannelConfig(input: NetConf, cniVersion: string): FlannelConfig {
  const conf = normalizeKeys(input, FLANNEL_FIELDS) as NetConf;
  const delegate = conf['delegate'] ?? {};
  if (!isPlainObject(delegate)) throw invalidConfig('invalid delegate', `${JSON.stringify(delegate)} must be an object`);
  // Messages as flannel's plugin words them (flannel.go, cmdAdd).
  if (delegate['type'] !== undefined && typeof delegate['type'] !== 'string') {
    throw invalidConfig("'delegate' dictionary, if present, must have (string) 'type' field", `delegate.type is ${JSON.stringify(delegate['type'])}`);
  }
  for (const k of ['name', 'ipam']) {
    if (delegate[k] !== undefined) throw invalidConfig(`'delegate' dictionary must not have '${k}' field, it'll be set by flannel`, `delegate.${k} is ${JSON.stringify(delegate[k])}`);
  }
  // flannel's NetConf embeds the CNI NetConf, whose type and dns Go decodes strictly.
  if (conf.type !== undefined && typeof conf.type !== 'string') throw invalidConfig('invalid type', `${JSON.stringify(conf.type)} must be a string`);
  if (conf['dns'] !== undefined && !isPlainObject(conf['dns'])) throw invalidConfig('invalid dns', `${JSON.stringify(conf['dns'])} must be an object`);
  const ipam = conf.ipam ?? {};
  if (!isPlainObject(ipam)) throw invalidConfig('invalid ipam', `${JSON.stringify(ipam)} must be an object`);
  return {
    name: conf.name,
    cniVersion,
    subnetFile: absPath(conf, 'subnetFile', DEFAULT_SUBNET_FILE),
    dataDir: absPath(conf, 'dataDir', DEFAULT_DATA_DIR),
    delegate: { ...delegate },
    ipam: { ...ipam },
    raw: conf,
  };
}

/** DEL's view of the config: only where the stored delegate lives; never throws (DEL must not block cleanup). */
export function delDataDir(input: NetConf): string | null {
  const v = (normalizeKeys(input, FLANNEL_FIELDS) as NetConf)['dataDir'];
  if (v === undefined) return DEFAULT_DATA_DIR;
  return typeof v === 'string' && v.startsWith('/') && !v.includes('\0') ? v : null;
}

/** The container ID as a file name under dataDir (validated by the skeleton, checked again here). */
export function scratchName(containerId: string): string {
  validateContainerId(containerId);
  return containerId;
}
