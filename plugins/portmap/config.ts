// Portmap configuration: stdin config -> typed PortmapConfig with normalised port mappings. Schema first
// (code 7 naming the field), then protocol/hostIP parsing and duplicate checks. Runs before anything is touched.
import { CniError, invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { NetConf } from '../../lib/cni/types.ts';
import { decodeForDel, stringAt, validateConfig } from '../../lib/cni/validate.ts';
import { formatIp, normalizeIp, parseIp } from '../../lib/ip/addr.ts';
import { validate } from '../../gen/validators/portmap.js';

/** Transport protocols a hostPort can carry (CNI conventions: tcp, udp, sctp). */
export type PortProtocol = 'tcp' | 'udp' | 'sctp';

/** One normalised mapping. `hostIP` absent: every local address of `family` (both families when absent too). */
export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol: PortProtocol;
  /** A specific local address in canonical text form; absent for '', 0.0.0.0 and ::. */
  hostIP?: string;
  /** Restricts a wildcard to one family (hostIP 0.0.0.0 -> 4, :: -> 6); absent: both. */
  family?: 4 | 6;
}

/** The normalised config every verb works from. */
export interface PortmapConfig {
  name: string;
  cniVersion: string;
  /** Masquerade hairpin (pod to its own hostPort) and 127.0.0.1 traffic; reference default true. */
  snat: boolean;
  /** Masquerade every connection DNATed to this pod's mappings (hides client addresses). */
  masqAll: boolean;
  mappings: PortMapping[];
  /** GC only: cni.dev/valid-attachments (spec 1.1); null when absent. */
  validAttachments: Attachment[] | null;
}

/** One attachment named by GC's cni.dev/valid-attachments. */
export interface Attachment {
  containerId: string;
  ifName: string;
}

interface RawMapping {
  hostPort: number;
  containerPort: number;
  protocol?: string;
  hostIP?: string;
}

interface PortmapNetConf extends NetConf {
  snat?: boolean;
  masqAll?: boolean;
  markMasqBit?: number;
  externalSetMarkChain?: string;
  conditionsV4?: string[];
  conditionsV6?: string[];
  runtimeConfig?: { portMappings?: RawMapping[] };
  'cni.dev/valid-attachments'?: Array<{ containerID: string; ifname: string }>;
}

const PROTOCOLS: readonly string[] = ['tcp', 'udp', 'sctp'];

/**
 * Parses and checks one invocation's config: code 7 for bad values. Every key of the reference is
 * accepted; markMasqBit, externalSetMarkChain, conditionsV4/V6 and backend change nothing (weft picks
 * the flows to masquerade by set lookups, not packet marks or per-network iptables matches).
 */
export function parsePortmapConfig(a: Pick<CmdArgs, 'config' | 'cniVersion'>): PortmapConfig {
  const c = validateConfig<PortmapNetConf>(validate, a.config);
  if (c.markMasqBit !== undefined && c.externalSetMarkChain !== undefined) {
    // The reference refuses the pair too: the external chain sets its own mark.
    throw invalidConfig('invalid configuration: cannot specify externalSetMarkChain and markMasqBit', `externalSetMarkChain ${JSON.stringify(c.externalSetMarkChain)}, markMasqBit ${c.markMasqBit}`);
  }
  const raw = c.runtimeConfig?.portMappings ?? [];
  return {
    name: c.name,
    cniVersion: a.cniVersion,
    snat: c.snat ?? true,
    masqAll: c.masqAll ?? false,
    mappings: dedupe(raw.map((m, i) => normalizeMapping(m, i))),
    validAttachments: c['cni.dev/valid-attachments']?.map((v) => ({ containerId: v.containerID, ifName: v.ifname })) ?? null,
  };
}

/** Normalises one runtimeConfig.portMappings entry (protocol lower case, hostIP canonical or wildcard). */
export function normalizeMapping(m: RawMapping, index: number): PortMapping {
  const field = `runtimeConfig.portMappings.${index}`;
  const protocol = (m.protocol ?? 'tcp').toLowerCase();
  if (!PROTOCOLS.includes(protocol)) {
    throw invalidConfig(`invalid configuration: ${field}.protocol must be tcp, udp or sctp`, `value ${JSON.stringify(m.protocol)}`);
  }
  const out: PortMapping = { hostPort: m.hostPort, containerPort: m.containerPort, protocol: protocol as PortProtocol };
  const text = (m.hostIP ?? '').trim();
  if (text === '') return out;
  const parsed = parseIp(text);
  if (parsed === null) throw invalidConfig(`invalid configuration: ${field}.hostIP is not an IP address`, `value ${JSON.stringify(m.hostIP)}`);
  const ip = normalizeIp(parsed);
  if (ip.value === 0n) return { ...out, family: ip.family };
  return { ...out, hostIP: formatIp(ip), family: ip.family };
}

/** The identity of a hostPort: what may be mapped to only one container. */
export function mappingKey(m: PortMapping): string {
  return `${m.protocol}/${m.hostIP ?? (m.family === undefined ? '*' : `*${m.family}`)}/${m.hostPort}`;
}

// Exact repeats are dropped; the same hostPort twice with different targets is a config error, since
// nft would refuse the second element of the transaction anyway (EEXIST) with a less clear message.
function dedupe(list: PortMapping[]): PortMapping[] {
  const seen = new Map<string, PortMapping>();
  for (const m of list) {
    const k = mappingKey(m);
    const prev = seen.get(k);
    if (prev === undefined) seen.set(k, m);
    else if (prev.containerPort !== m.containerPort) {
      throw invalidConfig('invalid configuration: hostPort mapped twice', `${k} -> ${prev.containerPort} and ${m.containerPort}`);
    }
  }
  return [...seen.values()];
}

/**
 * The config as DEL reads it: as ADD does, or, when ADD would refuse it, the network name alone
 * (elements are found by their comment): DEL never blocks cleanup.
 */
export function parsePortmapDelConfig(a: Pick<CmdArgs, 'config' | 'cniVersion'>): PortmapConfig {
  try {
    return parsePortmapConfig(a);
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    const name = stringAt(decodeForDel(validate, a.config), 'name') ?? '';
    return { name, cniVersion: a.cniVersion, snat: true, masqAll: false, mappings: [], validAttachments: null };
  }
}
