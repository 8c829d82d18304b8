// `weft doctor`'s options: weftd's lease-source and path flags (parsed and checked by weftd's own
// functions, through agent/inspect.ts), with the installed weftd unit's flags and
// then the paths `weft install` writes as defaults, plus the CNI directories and weftd's
// --metrics-addr. One normalisation entry point.
import { isAbsolute } from 'node:path';
import { leaseSourceFlags, normalizeStoreFlags, WEFTD_DEFAULTS, type EtcdSecurity, type RawLeaseSourceFlags } from '../../agent/inspect.ts';
import { DEFAULT_DATA_DIR } from '../../lib/attach/host-local-files.ts';
import { WEFTD_METRICS_ADDR } from '../install/render.ts';
import { defaultKubeconfig, defaultNodeName, type KubeOptions } from './kube.ts';
import { existsSync } from 'node:fs';
import { DEFAULT_ANNOTATION_PREFIX } from '../../agent/inspect.ts';

/** Where the DaemonSet (and kube-flannel's) mounts net-conf.json; on the host it is in the ConfigMap only. */
export const KUBE_NET_CONF = '/etc/kube-flannel/net-conf.json';

/** The DaemonSet's ConfigMap (deploy/weft.yaml), read for net-conf.json when no file has it. */
export const KUBE_CONFIGMAP = 'kube-weft/weft-cfg';

/** Everything the checks read, normalised. */
export interface DoctorOptions {
  subnetFile: string;
  /** file:/DIR store (ignored when etcdEndpoints is set). */
  store: string;
  etcdEndpoints?: string[];
  etcdPrefix: string;
  /** --etcd-cafile/certfile/keyfile/username/password as given (empty: plain http, no auth). */
  etcdSecurity: EtcdSecurity;
  /** net-conf.json; with etcd, absent means <prefix>/config. */
  netConf?: string;
  iface?: string;
  publicIp?: string;
  cniConfDir: string;
  cniBinDir: string;
  /** host-local's dataDir: one directory per network below it. */
  ipamDataDir: string;
  bridge: string;
  metricsAddr?: string;
  /** How metricsAddr was chosen: given (flag or unit), the installed default, or absent from the unit. */
  metricsFrom: 'given' | 'default' | 'unit-has-none';
  /** --kube-subnet-mgr: the leases are the Nodes'. */
  kube?: KubeOptions;
  /** weftd runs as the DaemonSet's pod here (no unit, and in a pod or on the Kubernetes API): fixes say kubectl, not systemctl. */
  daemonSet: boolean;
  json: boolean;
}

/** Defaults: weftd's own, and where `weft install` puts things on a node. */
export const DOCTOR_DEFAULTS = {
  subnetFile: WEFTD_DEFAULTS.subnetFile,
  store: 'file:/var/lib/weft/leases',
  etcdPrefix: WEFTD_DEFAULTS.etcdPrefix,
  netConf: '/etc/weft/net-conf.json',
  cniConfDir: '/etc/cni/net.d',
  cniBinDir: '/opt/cni/bin',
  ipamDataDir: DEFAULT_DATA_DIR,
  bridge: 'cni0',
  /** What `weft install`'s unit and the DaemonSet give weftd (cli/install/render.ts WEFTD_METRICS_ADDR). */
  metricsAddr: WEFTD_METRICS_ADDR,
} as const;

/** The flags as commander hands them over. */
export interface RawDoctorFlags extends RawLeaseSourceFlags {
  subnetFile?: string;
  netConf?: string;
  iface?: string;
  publicIp?: string;
  cniConfDir?: string;
  cniBinDir?: string;
  ipamDataDir?: string;
  bridge?: string;
  metricsAddr?: string;
  kubeSubnetMgr?: boolean | string;
  kubeconfigFile?: string;
  kubeApiUrl?: string;
  kubeAnnotationPrefix?: string;
  nodeName?: string;
  kubeConfigmap?: string;
  json?: boolean;
}

/** A bad flag: the CLI prints the message and exits 2. */
export class DoctorOptionError extends Error {}

function absolute(flag: string, v: string): string {
  if (!isAbsolute(v)) throw new DoctorOptionError(`--${flag} ${JSON.stringify(v)} must be an absolute path`);
  return v;
}

/**
 * Validates the flags (naming the flag and the bad value) and fills the defaults. `unitRead`: a weftd
 * unit was read (then weftd has the metrics address the unit gives, or none; else the installed default).
 */
export function normalizeDoctorOptions(f: RawDoctorFlags, unitRead = false, env: Readonly<Record<string, string | undefined>> = process.env): DoctorOptions {
  // In a pod (the weft DaemonSet's weftd container) with no unit and no other lease source named,
  // the leases are the Nodes', as that weftd's are.
  const otherSource = [f.store, f.etcdEndpoints, f.etcdPrefix, f.etcdCafile, f.etcdCertfile, f.etcdKeyfile, f.etcdUsername, f.etcdPassword].some((x) => x !== undefined);
  const kubeOn = f.kubeSubnetMgr === true || f.kubeSubnetMgr === 'true' || (!unitRead && !otherSource && Boolean(env['KUBERNETES_SERVICE_HOST']));
  const kubeOnly = (['kubeconfigFile', 'kubeApiUrl', 'kubeAnnotationPrefix', 'kubeConfigmap'] as const).filter((k) => f[k] !== undefined);
  if (!kubeOn && kubeOnly.length > 0) throw new DoctorOptionError(`${kubeOnly.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} need --kube-subnet-mgr`);
  if (kubeOn && (f.store !== undefined || f.etcdEndpoints !== undefined)) throw new DoctorOptionError('--kube-subnet-mgr and --store/--etcd-endpoints: choose one lease source');
  if (f.kubeConfigmap !== undefined && !/^[a-z0-9][a-z0-9.-]*\/[a-z0-9][a-z0-9.-]*$/.test(f.kubeConfigmap)) throw new DoctorOptionError(`--kube-configmap ${JSON.stringify(f.kubeConfigmap)} must be namespace/name`);
  const src = leaseSourceFlags(f);
  let sel: ReturnType<typeof normalizeStoreFlags>;
  try {
    sel = normalizeStoreFlags(src);
  } catch (e) {
    throw new DoctorOptionError((e as Error).message);
  }
  if (f.metricsAddr !== undefined && !/^(\[[0-9a-fA-F:]+\]|[^:\s]*):\d{1,5}$/.test(f.metricsAddr)) {
    throw new DoctorOptionError(`--metrics-addr ${JSON.stringify(f.metricsAddr)} must be host:port`);
  }
  const endpoints = sel.kind === 'etcd' ? sel.endpoints : undefined;
  // With etcd, flannel's way is the config in etcd: only an explicit --net-conf overrides it. With
  // Kubernetes, the DaemonSet's mount, else the installed path, else (neither exists) its ConfigMap.
  const kubeNetConf = existsSync(KUBE_NET_CONF) || !existsSync(DOCTOR_DEFAULTS.netConf) ? KUBE_NET_CONF : DOCTOR_DEFAULTS.netConf;
  const netConf = f.netConf ?? (kubeOn ? kubeNetConf : endpoints === undefined ? DOCTOR_DEFAULTS.netConf : undefined);
  const kubeconfigFile = f.kubeconfigFile ?? (kubeOn && f.kubeApiUrl === undefined ? defaultKubeconfig(env) : undefined);
  const kube: KubeOptions | undefined = kubeOn ? {
    ...(kubeconfigFile !== undefined ? { kubeconfigFile: absolute('kubeconfig-file', kubeconfigFile) } : {}),
    ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}),
    nodeName: f.nodeName ?? defaultNodeName(env),
    annotationPrefix: f.kubeAnnotationPrefix ?? DEFAULT_ANNOTATION_PREFIX,
    configMap: f.kubeConfigmap ?? KUBE_CONFIGMAP,
  } : undefined;
  return {
    subnetFile: absolute('subnet-file', f.subnetFile ?? DOCTOR_DEFAULTS.subnetFile),
    store: sel.kind === 'file' ? `file:${sel.dir}` : DOCTOR_DEFAULTS.store,
    ...(endpoints !== undefined ? { etcdEndpoints: endpoints } : {}),
    etcdPrefix: sel.kind === 'etcd' ? sel.prefix : DOCTOR_DEFAULTS.etcdPrefix,
    etcdSecurity: src.etcdSecurity ?? {},
    ...(netConf !== undefined ? { netConf: absolute('net-conf', netConf) } : {}),
    ...(f.iface !== undefined ? { iface: f.iface } : {}),
    ...(f.publicIp !== undefined ? { publicIp: f.publicIp } : {}),
    cniConfDir: absolute('cni-conf-dir', f.cniConfDir ?? DOCTOR_DEFAULTS.cniConfDir),
    cniBinDir: absolute('cni-bin-dir', f.cniBinDir ?? DOCTOR_DEFAULTS.cniBinDir),
    ipamDataDir: absolute('ipam-data-dir', f.ipamDataDir ?? DOCTOR_DEFAULTS.ipamDataDir),
    bridge: f.bridge ?? DOCTOR_DEFAULTS.bridge,
    ...(f.metricsAddr !== undefined ? { metricsAddr: f.metricsAddr } : unitRead ? {} : { metricsAddr: DOCTOR_DEFAULTS.metricsAddr }),
    metricsFrom: f.metricsAddr !== undefined ? 'given' : unitRead ? 'unit-has-none' : 'default',
    ...(kube !== undefined ? { kube } : {}),
    daemonSet: !unitRead && (kubeOn || Boolean(env['KUBERNETES_SERVICE_HOST'])),
    json: f.json === true,
  };
}
