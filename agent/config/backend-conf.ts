// The Backend section of flannel's net-conf.json: type, VNI, port, MTU, DirectRouting, and weft's
// ChecksumOffload (vxlan: when to apply the TX checksum workaround).
import { NetConfError, getKey, isObject } from './net-conf-error.ts';

/** Backends weftd implements. */
export type BackendType = 'vxlan' | 'host-gw' | 'udp';

/** The normalised Backend section; `port` is 0 for host-gw (no encapsulation). */
export interface BackendConf {
  type: BackendType;
  /** VXLAN network identifier (flannel default 1); also names the device flannel.<VNI>. */
  vni: number;
  /** UDP port: vxlan 8472 (the Linux default, not IANA's 4789, as flannel uses), udp 8285. */
  port: number;
  /** Explicit MTU for the backend device; absent means "uplink MTU minus the encapsulation overhead". */
  mtu?: number;
  /** vxlan only: plain routes via the node address to peers on the uplink's subnet. */
  directRouting: boolean;
  /** vxlan Group Based Policy extension; parsed for compatibility, refused when true. */
  gbp: boolean;
  /** vxlan only: TX checksum offload on the VTEP; auto turns it off on kernels older than 5.7 (see checksum-offload.ts). */
  checksumOffload: ChecksumOffload;
}

/** Backend.ChecksumOffload: "auto" (by kernel version), "off" (always apply the workaround), "on" (never). */
export type ChecksumOffload = 'auto' | 'off' | 'on';
const OFFLOAD_MODES: readonly string[] = ['auto', 'off', 'on'];

const DEFAULT_PORT: Record<BackendType, number> = { vxlan: 8472, udp: 8285, 'host-gw': 0 };
const TYPES: readonly string[] = ['vxlan', 'host-gw', 'udp'];

/** Validates and fills defaults for the Backend object; flannel's default backend, when the section is absent, is udp. */
export function normalizeBackendConf(raw: unknown): BackendConf {
  if (raw === undefined || raw === null) raw = { Type: 'udp' };
  if (!isObject(raw)) throw new NetConfError('Backend', raw, 'must be an object');
  const type = getKey(raw, 'Type');
  if (typeof type !== 'string' || !TYPES.includes(type)) {
    throw new NetConfError('Backend.Type', type, `must be one of ${TYPES.join(', ')}`);
  }
  const t = type as BackendType;
  const vni = optionalInt(raw, 'VNI', 0, 16777215) ?? 1;
  const port = optionalInt(raw, 'Port', 0, 65535) || DEFAULT_PORT[t];
  const mtu = optionalInt(raw, 'MTU', 68, 65535);
  const directRouting = optionalBool(raw, 'DirectRouting') ?? false;
  const gbp = optionalBool(raw, 'GBP') ?? false;
  if (directRouting && t !== 'vxlan') {
    throw new NetConfError('Backend.DirectRouting', directRouting, `is only meaningful for vxlan, not ${t}`);
  }
  if (gbp) throw new NetConfError('Backend.GBP', gbp, 'is not supported by weftd');
  const checksumOffload = normalizeChecksumOffload(getKey(raw, 'ChecksumOffload'));
  const conf: BackendConf = { type: t, vni, port, directRouting, gbp, checksumOffload };
  if (mtu !== undefined) conf.mtu = mtu;
  return conf;
}

/** The key as flannel decodes keys (case-insensitive); its value case-insensitive too ("Auto" = "auto"). */
function normalizeChecksumOffload(v: unknown): ChecksumOffload {
  if (v === undefined || v === null || v === '') return 'auto';
  const mode = typeof v === 'string' ? v.toLowerCase() : undefined;
  if (mode === undefined || !OFFLOAD_MODES.includes(mode)) throw new NetConfError('Backend.ChecksumOffload', v, `must be one of ${OFFLOAD_MODES.join(', ')}`);
  return mode as ChecksumOffload;
}

function optionalInt(obj: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = getKey(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new NetConfError(`Backend.${key}`, v, `must be an integer from ${min} to ${max}`);
  }
  return v;
}

function optionalBool(obj: Record<string, unknown>, key: string): boolean | undefined {
  const v = getKey(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new NetConfError(`Backend.${key}`, v, 'must be true or false');
  return v;
}
