// Firewall configuration: stdin config -> typed FirewallConfig (schema first, code 7 naming the field).
// Runs before anything is touched. Every backend value is served by nftables (docs/firewall.md).
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { NetConf } from '../../lib/cni/types.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/firewall.js';

/** The reference's default admin chain name (iptables backend). */
export const DEFAULT_ADMIN_CHAIN = 'CNI-ADMIN';
/** The reference's default firewalld zone. */
export const DEFAULT_ZONE = 'trusted';

/**
 * `open`: no isolation; `same-bridge`: traffic between two isolated bridges is dropped; `isolated`:
 * as same-bridge, and traffic between two ports of the same bridge is dropped too (needs br_netfilter).
 */
export type IngressPolicy = 'open' | 'same-bridge' | 'isolated';

/** One attachment named by GC's cni.dev/valid-attachments. */
export interface Attachment {
  containerId: string;
  ifName: string;
}

/** The normalised config every verb works from. */
export interface FirewallConfig {
  name: string;
  /** As given ('' when absent); iptables, firewalld, nftables and '' all mean weft's nftables rules. */
  backend: string;
  /** A regular chain in `inet weft` every pod's forward traffic passes first (admins add rules there). */
  adminChain: string;
  /** Accepted for compatibility; no effect (firewalld is not called). */
  firewalldZone: string;
  ingressPolicy: IngressPolicy;
  /** GC only: cni.dev/valid-attachments; null when absent. */
  validAttachments: Attachment[] | null;
}

interface FirewallNetConf extends NetConf {
  backend?: string;
  iptablesAdminChainName?: string;
  firewalldZone?: string;
  ingressPolicy?: string;
  'cni.dev/valid-attachments'?: Array<{ containerID: string; ifname: string }>;
}

// An nft chain name we can write unquoted and iptables users recognise (CNI-ADMIN, MY_CHAIN).
const ADMIN_CHAIN_RE = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;
// The prefixes of the chains weft's concerns own in `inet weft`: jumping to one (a base chain, or the
// network's own chain) would fail or loop.
const WEFT_CHAIN_RE = /^(fw|bridge|portmap|masq|ipmasq|weft)[-_]/i;

/** Parses one invocation's config; code 7 for an unknown ingressPolicy or an unusable admin chain name. */
export function parseFirewallConfig(a: Pick<CmdArgs, 'config'>): FirewallConfig {
  const c = validateConfig<FirewallNetConf>(validate, a.config);
  const adminChain = c.iptablesAdminChainName === undefined || c.iptablesAdminChainName === '' ? DEFAULT_ADMIN_CHAIN : c.iptablesAdminChainName;
  if (!ADMIN_CHAIN_RE.test(adminChain)) {
    throw invalidConfig('invalid configuration: iptablesAdminChainName must be a chain name ([A-Za-z][A-Za-z0-9_-]*, at most 63 characters)', `value ${JSON.stringify(adminChain)}`);
  }
  if (WEFT_CHAIN_RE.test(adminChain)) {
    throw invalidConfig('invalid configuration: iptablesAdminChainName names one of weft\'s own chains', `value ${JSON.stringify(adminChain)}; weft uses the prefixes fw-, bridge-, portmap-, masq-, ipmasq-, weft-`);
  }
  return {
    name: c.name,
    backend: c.backend ?? '',
    adminChain,
    firewalldZone: c.firewalldZone === undefined || c.firewalldZone === '' ? DEFAULT_ZONE : c.firewalldZone,
    ingressPolicy: parseIngressPolicy(c.ingressPolicy),
    validAttachments: c['cni.dev/valid-attachments']?.map((v) => ({ containerId: v.containerID, ifName: v.ifname })) ?? null,
  };
}

/** '' and 'open' mean no isolation, as in the reference; anything else but 'same-bridge' and 'isolated' is refused. */
export function parseIngressPolicy(v: string | undefined): IngressPolicy {
  if (v === undefined || v === '' || v === 'open') return 'open';
  if (v === 'same-bridge' || v === 'isolated') return v;
  throw invalidConfig(`invalid configuration: unknown ingressPolicy ${JSON.stringify(v)}`, 'expected "open", "same-bridge" or "isolated"');
}
