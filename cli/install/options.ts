// Options of `weft install` / `scripts/install.sh`: defaults for a real node, one normalisation
// entry point, and validation errors that name the option and the bad value.
import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { InstallOptionError } from './errors.ts';
import { normalizeLeaseSource, readExistingNetConf, type LeaseSource, type RawLeaseFlags } from './lease-source.ts';

export { InstallOptionError } from './errors.ts';

/** Data-plane backends an install can configure; the flannel ones also install weftd. */
export const BACKENDS = ['bridge', 'flannel-vxlan', 'host-gw', 'flannel-udp'] as const;
export type Backend = (typeof BACKENDS)[number];

/** Everything the installer needs, all directories absolute. */
export interface InstallOptions {
  backend: Backend;
  /** Directory holding the built executables (dist/bin). */
  sourceDir: string;
  /** CNI plugin directory the runtime searches (CNI_PATH). */
  binDir: string;
  /** CNI configuration directory the runtime reads conflists from. */
  confDir: string;
  /** Where the weftd systemd unit goes. */
  unitDir: string;
  /** Where weftd itself goes (the unit's ExecStart). */
  agentDir: string;
  /** weftd's own configuration (net-conf.json). */
  weftConfDir: string;
  /** The install manifest and backups of replaced files. */
  stateDir: string;
  /** CNI network name (the conflist's `name`; host-local keeps its records under it). */
  networkName: string;
  /** File name of the conflist inside confDir (libcni loads the lexically first). */
  conflistName: string;
  /** Pod network: the bridge's host-local subnet, or flannel's cluster Network. */
  network: string;
  /** Only report what would be written (with the text files' contents). */
  dryRun: boolean;
  /** Where weftd leases the node's subnet (`none` for the bridge backend). */
  leaseSource: LeaseSource;
  /** An existing net-conf.json the unit names instead of one the install writes. */
  netConfFile?: string;
  /**
   * The standalone executable (dist/sea/weft) to install instead of the bundles: copied once into
   * binDir as `weft`, every plugin name hard-linked to it, weftd run from it. Undefined: the bundles.
   */
  standaloneFile?: string;
}

/** Defaults for a real node (the paths runtimes and systemd use). */
export const DEFAULTS: Omit<InstallOptions, 'sourceDir' | 'backend' | 'leaseSource'> = {
  binDir: '/opt/cni/bin',
  confDir: '/etc/cni/net.d',
  unitDir: '/etc/systemd/system',
  agentDir: '/usr/local/bin',
  weftConfDir: '/etc/weft',
  stateDir: '/var/lib/weft/install',
  networkName: 'weft',
  conflistName: '10-weft.conflist',
  network: '10.244.0.0/16',
  dryRun: false,
};


/** kube-flannel's (and k3s's, kubespray's) network name: the weftd backends keep it by default. */
export const FLANNEL_NETWORK_NAME = 'cbr0';

/** The `name` of the lexically first conflist in `confDir` whose first plugin is `flannel`, if any. */
export function flannelConflistName(confDir: string): string | undefined {
  let files: string[];
  try {
    files = readdirSync(confDir).filter((f) => f.endsWith('.conflist')).sort();
  } catch {
    return undefined;
  }
  for (const f of files) {
    try {
      const doc = JSON.parse(readFileSync(join(confDir, f), 'utf8')) as { name?: unknown; plugins?: Array<{ type?: unknown }> };
      if (typeof doc.name === 'string' && doc.plugins?.[0]?.type === 'flannel') return doc.name;
    } catch {
      // unreadable or not JSON: not a conflist a runtime would load either
    }
  }
  return undefined;
}

/**
 * The network name when --network-name is not given: the name of the flannel conflist being replaced
 * (host-local keeps its records per network name, so the pods flannel started keep their addresses
 * in the directory weft allocates from), else `cbr0` for the weftd backends (kube-flannel's) and
 * DEFAULTS.networkName for the bridge.
 */
export function defaultNetworkName(backend: Backend, confDir: string): string {
  return flannelConflistName(confDir) ?? (usesWeftd(backend) ? FLANNEL_NETWORK_NAME : DEFAULTS.networkName);
}

const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
const CIDR4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function validateCidr4(option: string, value: string): string {
  const m = CIDR4_RE.exec(value);
  const ok = m !== null && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) >= 8 && Number(m[5]) <= 28;
  if (!ok) throw new InstallOptionError(`${option}: "${value}" is not an IPv4 CIDR with a prefix between /8 and /28`);
  // flanneld refuses a Network with host bits, and host-local a subnet with them: say so before the first write.
  const prefix = Number(m[5]);
  const addr = m.slice(1, 5).reduce((a, o) => a * 256 + Number(o), 0);
  const size = 2 ** (32 - prefix);
  if (addr % size !== 0) {
    const net = addr - (addr % size);
    const text = [24, 16, 8, 0].map((sh) => Math.floor(net / 2 ** sh) % 256).join('.');
    throw new InstallOptionError(`${option}: "${value}" has host bits set; the network is ${text}/${prefix}`);
  }
  return value;
}

function normalizeDir(option: string, value: string): string {
  if (value === '') throw new InstallOptionError(`${option}: must not be empty`);
  return isAbsolute(value) ? resolve(value) : resolve(process.cwd(), value);
}

/** flannel's Backend.Type for each weftd-driven backend. */
export const FLANNEL_TYPE: Record<Exclude<Backend, 'bridge'>, string> = { 'flannel-vxlan': 'vxlan', 'host-gw': 'host-gw', 'flannel-udp': 'udp' };

/** The raw values normalizeInstallOptions accepts (commander's keys). */
export type RawInstallOptions = Partial<Record<keyof InstallOptions, unknown>> & RawLeaseFlags & { sourceDir: string; netConf?: unknown };

/** Validates raw CLI values and fills defaults; every directory comes back absolute. */
export function normalizeInstallOptions(raw: RawInstallOptions): InstallOptions {
  const str = (k: keyof InstallOptions): string | undefined => {
    const v = raw[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new InstallOptionError(`${k}: expected a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const backend = str('backend') ?? 'bridge';
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new InstallOptionError(`--backend: "${backend}" is not one of ${BACKENDS.join(', ')}`);
  }
  const dir = (k: 'binDir' | 'confDir' | 'unitDir' | 'agentDir' | 'weftConfDir' | 'stateDir', flag: string): string =>
    normalizeDir(flag, str(k) ?? DEFAULTS[k]);
  const confDir = dir('confDir', '--conf-dir');
  const networkName = str('networkName') ?? defaultNetworkName(backend as Backend, confDir);
  if (!NAME_RE.test(networkName)) throw new InstallOptionError(`--network-name: "${networkName}" is not a valid CNI network name`);
  const conflistName = str('conflistName') ?? DEFAULTS.conflistName;
  if (!/^[a-zA-Z0-9_.-]+\.conflist$/.test(conflistName)) {
    throw new InstallOptionError(`--conflist-name: "${conflistName}" must be a plain file name ending in .conflist`);
  }
  const weftd = usesWeftd(backend as Backend);
  const leaseSource = normalizeLeaseSource(raw, backend, weftd);
  const netConf = raw.netConf;
  if (netConf !== undefined) {
    if (!weftd) throw new InstallOptionError(`--net-conf: the ${backend} backend runs no weftd`);
    if (typeof netConf !== 'string' || netConf === '' || /\s/.test(netConf)) throw new InstallOptionError(`--net-conf: "${String(netConf)}" must be a path without spaces`);
    const { backendType } = readExistingNetConf(netConf);
    const want = FLANNEL_TYPE[backend as Exclude<Backend, 'bridge'>];
    // flannel's default Backend.Type (none given) is udp.
    if ((backendType ?? 'udp').toLowerCase() !== want) {
      throw new InstallOptionError(`--net-conf: ${netConf} has Backend.Type "${backendType ?? '(none: udp)'}" but --backend ${backend} is "${want}"`);
    }
  }
  return {
    backend: backend as Backend,
    sourceDir: normalizeDir('--source', raw.sourceDir),
    binDir: dir('binDir', '--bin-dir'),
    confDir,
    unitDir: dir('unitDir', '--unit-dir'),
    agentDir: dir('agentDir', '--agent-dir'),
    weftConfDir: dir('weftConfDir', '--weft-conf-dir'),
    stateDir: dir('stateDir', '--state-dir'),
    networkName,
    conflistName,
    network: validateCidr4('--network', str('network') ?? DEFAULTS.network),
    dryRun: raw.dryRun === true,
    leaseSource,
    ...(typeof netConf === 'string' ? { netConfFile: netConf } : {}),
    ...(raw.standaloneFile !== undefined ? { standaloneFile: normalizeDir('--standalone', str('standaloneFile') ?? '') } : {}),
  };
}

/** True for the backends driven by weftd (flannel semantics: subnet.env, per-node leases). */
export function usesWeftd(backend: Backend): boolean {
  return backend !== 'bridge';
}
