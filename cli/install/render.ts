// The text files an install writes: the conflist for the chosen backend, weftd's net-conf.json
// and its systemd unit. Pure functions of the options, so the tests can compare bytes.
import { join } from 'node:path';
import { kubeUnitEnv, leaseSourceArgs, type LeaseSource } from './lease-source.ts';
import { FLANNEL_TYPE, usesWeftd, type Backend, type InstallOptions } from './options.ts';

/** Where the installed weftd serves /healthz and /metrics (the DaemonSet's address too): the node's loopback. */
export const WEFTD_METRICS_ADDR = '127.0.0.1:9101';

/** The subnet.env weftd writes and the flannel plugins read (flannel's well-known path). */
export const SUBNET_FILE = '/run/flannel/subnet.env';

/**
 * CNI versions a conflist offers: runtimes on libcni 1.2+ (containerd 2, CRI-O 1.31+) pick the highest
 * they support, and only from 1.1.0 on do they send STATUS and GC; older ones ignore the key and
 * read `cniVersion`.
 */
export const CNI_VERSIONS = ['1.0.0', '1.1.0'] as const;

/** The CNI conflist for `opts.backend` (cniVersion 1.0.0, cniVersions up to 1.1.0, portmap chained for hostPorts); `flannel` for the weftd backends. */
export function renderConflist(opts: Pick<InstallOptions, 'backend' | 'networkName' | 'network'>): string {
  const portmap = { type: 'portmap', capabilities: { portMappings: true } };
  const first =
    opts.backend === 'bridge'
      ? {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          isDefaultGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: opts.network }]] },
        }
      : {
          // flannel's own type, as kube-flannel's cni-conf.json writes it: one conflist for every
          // weftd backend (subnetFile and dataDir keep flannel's defaults, SUBNET_FILE among them).
          type: 'flannel',
          delegate: { hairpinMode: true, isDefaultGateway: true },
        };
  return `${JSON.stringify({ cniVersion: '1.0.0', cniVersions: CNI_VERSIONS, name: opts.networkName, plugins: [first, portmap] }, null, 2)}\n`;
}

/** The plugin types a conflist names (each must be an executable in the CNI bin dir). */
export function conflistTypes(text: string): string[] {
  const doc = JSON.parse(text) as { plugins: Array<{ type: string; ipam?: { type?: string } }> };
  return doc.plugins.flatMap((p) => [p.type, ...(p.ipam?.type !== undefined ? [p.ipam.type] : [])]);
}

/** weftd's net-conf.json (flannel's keys) for a weftd-driven backend. */
export function renderNetConf(opts: Pick<InstallOptions, 'backend' | 'network'>): string {
  if (!usesWeftd(opts.backend)) throw new Error(`backend ${opts.backend} has no weftd configuration`);
  const type = FLANNEL_TYPE[opts.backend as Exclude<Backend, 'bridge'>];
  return `${JSON.stringify({ Network: opts.network, SubnetLen: 24, Backend: { Type: type } }, null, 2)}\n`;
}

/** Where weftd is started from: agentDir, or binDir for a standalone install. */
export type WeftdPlace = Pick<InstallOptions, 'agentDir'> & Partial<Pick<InstallOptions, 'binDir' | 'standaloneFile'>>;

/** The command that starts weftd: `<agentDir>/weftd`, or `<binDir>/weft weftd` for a standalone install. */
export function weftdCommand(opts: WeftdPlace): string[] {
  return opts.standaloneFile !== undefined && opts.binDir !== undefined ? [join(opts.binDir, 'weft'), 'weftd'] : [join(opts.agentDir, 'weftd')];
}

/** What the unit needs to know about the lease source; without one, the file store (one machine). */
export type UnitSource = Partial<Pick<InstallOptions, 'netConfFile'>> & { leaseSource?: LeaseSource };

/** The net-conf.json weftd reads: --net-conf's file, else the one the install writes; none with etcd (flannel reads <prefix>/config). */
export function unitNetConfPath(opts: Pick<InstallOptions, 'weftConfDir'> & UnitSource): string | undefined {
  if (opts.netConfFile !== undefined) return opts.netConfFile;
  return opts.leaseSource?.kind === 'etcd' ? undefined : join(opts.weftConfDir, 'net-conf.json');
}

/** Where the etcd password goes (0600), referenced by the unit's EnvironmentFile=. */
export function weftdEnvPath(opts: Pick<InstallOptions, 'weftConfDir'>): string {
  return join(opts.weftConfDir, 'weftd.env');
}

/** The systemd unit running weftd (weftdCommand) with its lease source and net-conf. */
export function renderWeftdUnit(opts: WeftdPlace & Pick<InstallOptions, 'weftConfDir'> & UnitSource): string {
  const source = opts.leaseSource ?? { kind: 'file' };
  const netConf = unitNetConfPath(opts);
  // /healthz and /metrics on the node's loopback only: `weft doctor` reads them there by default.
  const args = [...(netConf !== undefined ? [`--net-conf=${netConf}`] : []), ...leaseSourceArgs(source), `--subnet-file=${SUBNET_FILE}`, '--ip-masq', `--metrics-addr=${WEFTD_METRICS_ADDR}`];
  const envFile = source.kind === 'etcd' && source.password !== undefined ? [`EnvironmentFile=${weftdEnvPath(opts)}`] : [];
  return [
    '# weftd, the weft node agent. Written by `weft install`; `weft install --uninstall` removes it.',
    '[Unit]',
    'Description=weft node agent (flannel-compatible subnet leases and data plane)',
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    'ExecStartPre=/bin/mkdir -p /run/flannel /var/lib/weft',
    ...envFile,
    ...kubeUnitEnv(source),
    `ExecStart=${[...weftdCommand(opts), ...args].join(' ')}`,
    // SIGTERM: weftd exits without touching the data plane, so pods keep working across restarts.
    'KillSignal=SIGTERM',
    'Restart=always',
    'RestartSec=2',
    'LimitNOFILE=65536',
    'CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW',
    'AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW',
    'NoNewPrivileges=true',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
