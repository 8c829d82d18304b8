// Tuning configuration: stdin config + CNI_ARGS -> typed TuningConfig. Schema first (code 7 naming the
// field), then sysctl keys, MAC and data dir. Runs before anything is touched.
import { parseCniArgs } from '../../lib/cni/args.ts';
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { NetConf } from '../../lib/cni/types.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { formatMac, parseMac } from '../../lib/netlink/addr.ts';
import { validate } from '../../gen/validators/tuning.js';
import { parseSysctls, type SysctlSetting } from './sysctl-keys.ts';

/** The reference's default data dir: one JSON file per attachment with the values DEL restores. */
export const DEFAULT_DATA_DIR = '/run/cni/tuning';

/** One attachment named by GC's cni.dev/valid-attachments. */
export interface Attachment {
  containerId: string;
  ifName: string;
}

/** The normalised config every verb works from; an absent field means "leave as is". */
export interface TuningConfig {
  name: string;
  sysctls: SysctlSetting[];
  /** Lowercase colon form. */
  mac?: string;
  /** Only true turns promiscuous mode on; false leaves it (reference). */
  promisc: boolean;
  /** 0: unset (reference). */
  mtu: number;
  allmulti?: boolean;
  txQLen?: number;
  dataDir: string;
  validAttachments: Attachment[] | null;
}

interface TuningArgs {
  sysctl?: Record<string, string>;
  mac?: string;
  promisc?: boolean;
  mtu?: number;
  allmulti?: boolean;
  txQLen?: number;
}

interface TuningNetConf extends NetConf, TuningArgs {
  dataDir?: string;
  runtimeConfig?: { mac?: string };
  args?: { cni?: TuningArgs };
  'cni.dev/valid-attachments'?: Array<{ containerID: string; ifname: string }>;
}

/** Parses one invocation's config. MAC precedence as the reference: mac, CNI_ARGS MAC, runtimeConfig.mac, args.cni.mac (later wins). */
export function parseTuningConfig(a: Pick<CmdArgs, 'config' | 'args' | 'ifName'>): TuningConfig {
  const c = validateConfig<TuningNetConf>(validate, a.config);
  const env = parseCniArgs(a.args, { known: ['MAC'] });
  const over = c.args?.cni ?? {};
  let mac = nonEmpty(c.mac);
  mac = nonEmpty(env.MAC) ?? mac;
  mac = nonEmpty(c.runtimeConfig?.mac) ?? mac;
  mac = nonEmpty(over.mac) ?? mac;
  const cfg: TuningConfig = {
    name: c.name,
    sysctls: parseSysctls({ ...(c.sysctl ?? {}), ...(over.sysctl ?? {}) }, a.ifName),
    promisc: over.promisc ?? c.promisc ?? false,
    mtu: over.mtu ?? c.mtu ?? 0,
    dataDir: dataDirOf(c),
    validAttachments: c['cni.dev/valid-attachments']?.map((v) => ({ containerId: v.containerID, ifName: v.ifname })) ?? null,
  };
  if (mac !== undefined) cfg.mac = normalizeMac(mac);
  const allmulti = over.allmulti ?? c.allmulti;
  if (allmulti !== undefined) cfg.allmulti = allmulti;
  const txQLen = over.txQLen ?? c.txQLen;
  if (txQLen !== undefined) cfg.txQLen = txQLen;
  return cfg;
}

/** The data dir of a config (absolute, no NUL); lenient on anything else so DEL can always find its files. */
export function dataDirOf(c: { dataDir?: unknown }): string {
  const d = c.dataDir;
  if (typeof d !== 'string' || d === '') return DEFAULT_DATA_DIR;
  if (!d.startsWith('/') || d.includes('\0')) throw invalidConfig('invalid configuration: dataDir must be an absolute path', `value ${JSON.stringify(d)}`);
  return d;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/** A 6-byte unicast-or-not MAC in ':' or '-' form -> lowercase colon form; code 7 otherwise. */
export function normalizeMac(s: string): string {
  try {
    return formatMac(parseMac(s));
  } catch {
    throw invalidConfig('invalid configuration: mac is not a MAC address', `value ${JSON.stringify(s)}`);
  }
}
