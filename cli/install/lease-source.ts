// Where weftd leases the node's subnet, as `weft install` is told: etcd (a cluster), the Kubernetes
// API (once weftd has it), or the file store (one machine only). Validation names the option; the
// rendering gives weftd's flags (flanneld's names) and the 0600 environment file holding a password.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isAbsolute } from 'node:path';
import { InstallOptionError } from './errors.ts';

/** The file store's directory on the node (the unit's --store). */
export const FILE_STORE_DIR = '/var/lib/weft/leases';

/** etcd connection as flanneld names its flags (TLS/auth files are paths on the node). */
export interface EtcdSource {
  kind: 'etcd';
  endpoints: string[];
  prefix?: string;
  cafile?: string;
  certfile?: string;
  keyfile?: string;
  username?: string;
  password?: string;
}

/**
 * The Kubernetes API as weftd --kube-subnet-mgr reaches it from the unit: NODE_NAME and either a
 * kubeconfig on the node or, when `weft install` itself runs in a pod, that pod's service address.
 */
export interface KubeSource {
  kind: 'kube';
  nodeName: string;
  kubeconfigFile?: string;
  inCluster?: { host: string; port: string };
}

/** Lease source of a weftd install; `none` for the bridge backend (no weftd). */
export type LeaseSource = { kind: 'none' } | { kind: 'file' } | KubeSource | EtcdSource;

/** The raw lease-source options (commander's camelCase keys). */
export interface RawLeaseFlags {
  singleNode?: unknown;
  kubeSubnetMgr?: unknown;
  etcdEndpoints?: unknown;
  etcdPrefix?: unknown;
  etcdCafile?: unknown;
  etcdCertfile?: unknown;
  etcdKeyfile?: unknown;
  etcdUsername?: unknown;
  etcdPassword?: unknown;
  nodeName?: unknown;
  kubeconfigFile?: unknown;
}

/** What the kube checks read from the machine (injected by tests). */
export interface KubeHost {
  env: NodeJS.ProcessEnv;
  hostname: () => string;
  exists: (path: string) => boolean;
}

const THIS_HOST: KubeHost = { env: process.env, hostname, exists: existsSync };

/** The service-account token a pod gets (client-go's in-cluster config reads it). */
const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

const ETCD_EXTRA = ['etcdPrefix', 'etcdCafile', 'etcdCertfile', 'etcdKeyfile', 'etcdUsername', 'etcdPassword'] as const;
const KUBE_EXTRA = ['nodeName', 'kubeconfigFile'] as const;
const flagOf = (k: string): string => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Why the file store cannot serve more than one machine (the refusal and the docs say the same). */
export const FILE_STORE_WHY =
  "weftd on other machines never sees its leases, so nodes never learn each other's subnets " +
  '(pods on different machines cannot reach each other) and two nodes may lease the same subnet';

/** Validates the lease-source options for `backend`; throws InstallOptionError naming the option. */
export function normalizeLeaseSource(raw: RawLeaseFlags, backend: string, usesWeftd: boolean, host: KubeHost = THIS_HOST): LeaseSource {
  const str = (k: keyof RawLeaseFlags): string | undefined => {
    const v = raw[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '' || /\s/.test(v)) throw new InstallOptionError(`${flagOf(k)}: "${String(v)}" must be a non-empty value without spaces`);
    return v;
  };
  const extras = ETCD_EXTRA.filter((k) => raw[k] !== undefined);
  const kubeExtras = KUBE_EXTRA.filter((k) => raw[k] !== undefined);
  const chosen = [
    ...(raw.etcdEndpoints !== undefined ? ['--etcd-endpoints'] : []),
    ...(raw.kubeSubnetMgr === true ? ['--kube-subnet-mgr'] : []),
    ...(raw.singleNode === true ? ['--single-node'] : []),
  ];
  if (!usesWeftd) {
    const weftdOnly = chosen.filter((c) => c !== '--single-node').concat(extras.map(flagOf), kubeExtras.map(flagOf));
    if (weftdOnly.length > 0) throw new InstallOptionError(`${weftdOnly.join(', ')}: the ${backend} backend runs no weftd; lease sources apply to flannel-vxlan, host-gw and flannel-udp`);
    return { kind: 'none' };
  }
  if (raw.etcdEndpoints === undefined && extras.length > 0) throw new InstallOptionError(`${extras.map(flagOf).join(', ')} need --etcd-endpoints`);
  if (raw.kubeSubnetMgr !== true && kubeExtras.length > 0) throw new InstallOptionError(`${kubeExtras.map(flagOf).join(', ')} need --kube-subnet-mgr`);
  if (chosen.length > 1) throw new InstallOptionError(`${chosen.join(' and ')}: choose one lease source`);
  if (chosen.length === 0) {
    throw new InstallOptionError(
      `--backend ${backend} needs a lease source: --kube-subnet-mgr for a Kubernetes cluster (each node's podCIDR, as kube-flannel), --etcd-endpoints URL[,URL] for a cluster with etcd, or --single-node for the file store, which lives on this one machine only: ${FILE_STORE_WHY}`,
    );
  }
  if (raw.singleNode === true) return { kind: 'file' };
  if (raw.kubeSubnetMgr === true) return normalizeKubeSource(str('nodeName'), str('kubeconfigFile'), host);
  const endpoints = (str('etcdEndpoints') ?? '').split(',').filter(Boolean);
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(e)) throw new InstallOptionError(`--etcd-endpoints: "${e}" is not a URL such as https://10.0.0.1:2379`);
  }
  if (endpoints.length === 0) throw new InstallOptionError('--etcd-endpoints: lists no URL');
  const src: EtcdSource = { kind: 'etcd', endpoints };
  const prefix = str('etcdPrefix');
  if (prefix !== undefined) {
    if (!prefix.startsWith('/')) throw new InstallOptionError(`--etcd-prefix: "${prefix}" must start with "/"`);
    src.prefix = prefix;
  }
  for (const [k, field] of [['etcdCafile', 'cafile'], ['etcdCertfile', 'certfile'], ['etcdKeyfile', 'keyfile']] as const) {
    const p = str(k);
    if (p === undefined) continue;
    if (!isAbsolute(p)) throw new InstallOptionError(`${flagOf(k)}: "${p}" must be an absolute path (weftd reads it on the node)`);
    src[field] = p;
  }
  if ((src.certfile === undefined) !== (src.keyfile === undefined)) throw new InstallOptionError('--etcd-certfile and --etcd-keyfile go together');
  const user = str('etcdUsername');
  if (user !== undefined) src.username = user;
  if (typeof raw.etcdPassword === 'string' && raw.etcdPassword !== '') src.password = raw.etcdPassword;
  else if (raw.etcdPassword !== undefined) throw new InstallOptionError('--etcd-password: must be a non-empty string');
  if (src.password !== undefined && src.username === undefined) throw new InstallOptionError('--etcd-password needs --etcd-username');
  return src;
}

/** A Node name as the API accepts it (RFC 1123 subdomain, what kubelet registers). */
const NODE_NAME_RE = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** --node-name (default: this host's name, lower-cased as kubelet registers it) and the API credentials. */
function normalizeKubeSource(nodeName: string | undefined, kubeconfigFile: string | undefined, host: KubeHost): KubeSource {
  const name = nodeName ?? host.hostname().toLowerCase();
  if (!NODE_NAME_RE.test(name)) {
    throw new InstallOptionError(`--node-name: "${name}"${nodeName === undefined ? ' (this host\'s name)' : ''} is not a Kubernetes node name (lower-case RFC 1123 subdomain); give the name kubelet registers this node under`);
  }
  if (kubeconfigFile !== undefined) {
    if (!isAbsolute(kubeconfigFile)) throw new InstallOptionError(`--kubeconfig-file: "${kubeconfigFile}" must be an absolute path (weftd reads it on the node)`);
    if (!host.exists(kubeconfigFile)) throw new InstallOptionError(`--kubeconfig-file: ${kubeconfigFile} does not exist: weftd could not reach the Kubernetes API`);
    return { kind: 'kube', nodeName: name, kubeconfigFile };
  }
  const { KUBERNETES_SERVICE_HOST: h, KUBERNETES_SERVICE_PORT: p } = host.env;
  if (h && p && host.exists(SA_TOKEN)) return { kind: 'kube', nodeName: name, inCluster: { host: h, port: p } };
  throw new InstallOptionError(
    '--kube-subnet-mgr needs credentials for the Kubernetes API: --kubeconfig-file PATH (a kubeconfig allowed to get/list/watch nodes and patch nodes/status, ' +
      'e.g. /etc/kubernetes/kubelet.conf on a kubeadm node); none was given and this is not a pod (no KUBERNETES_SERVICE_HOST/PORT and service-account token)',
  );
}

/** Environment= lines of the unit for the kube source: the node name, and the in-cluster service address. */
export function kubeUnitEnv(src: LeaseSource): string[] {
  if (src.kind !== 'kube') return [];
  return [
    `Environment=NODE_NAME=${src.nodeName}`,
    ...(src.inCluster ? [`Environment=KUBERNETES_SERVICE_HOST=${src.inCluster.host}`, `Environment=KUBERNETES_SERVICE_PORT=${src.inCluster.port}`] : []),
  ];
}

/** The environment variable the unit passes the etcd password through (kept out of the 0644 unit). */
export const PASSWORD_VAR = 'WEFTD_ETCD_PASSWORD';

/** weftd's lease-source flags for `src` (the password as ${PASSWORD_VAR}, expanded by systemd into one argument). */
export function leaseSourceArgs(src: LeaseSource): string[] {
  switch (src.kind) {
    case 'none':
      return [];
    case 'file':
      return [`--store=file:${FILE_STORE_DIR}`];
    case 'kube':
      return ['--kube-subnet-mgr', ...(src.kubeconfigFile !== undefined ? [`--kubeconfig-file=${src.kubeconfigFile}`] : [])];
    case 'etcd':
      return [
        `--etcd-endpoints=${src.endpoints.join(',')}`,
        ...(src.prefix !== undefined ? [`--etcd-prefix=${src.prefix}`] : []),
        ...(src.cafile !== undefined ? [`--etcd-cafile=${src.cafile}`] : []),
        ...(src.certfile !== undefined ? [`--etcd-certfile=${src.certfile}`] : []),
        ...(src.keyfile !== undefined ? [`--etcd-keyfile=${src.keyfile}`] : []),
        ...(src.username !== undefined ? [`--etcd-username=${src.username}`] : []),
        ...(src.password !== undefined ? [`--etcd-password=\${${PASSWORD_VAR}}`] : []),
      ];
  }
}

/** The systemd EnvironmentFile holding the etcd password (double-quoted, `\` and `"` escaped); undefined without one. */
export function renderWeftdEnv(src: LeaseSource): string | undefined {
  if (src.kind !== 'etcd' || src.password === undefined) return undefined;
  return `# Secrets for weftd.service (mode 0600). Written by \`weft install\`.\n${PASSWORD_VAR}="${src.password.replace(/[\\"]/g, (c) => `\\${c}`)}"\n`;
}

/** Files named by the etcd options that do not exist here (a warning: they may be put in place later). */
export function missingEtcdFiles(src: LeaseSource): string[] {
  if (src.kind !== 'etcd') return [];
  return [src.cafile, src.certfile, src.keyfile].filter((p): p is string => p !== undefined && !existsSync(p));
}

/** Throws unless the weftd run by `cmd` lists --kube-subnet-mgr in its --help (the Kubernetes lease source). */
export function assertWeftdHasKube(cmd: string[]): void {
  const [bin = '', ...args] = cmd;
  const r = spawnSync(bin, [...args, '--help'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 0 && /--kube-subnet-mgr\b/.test(r.stdout)) return;
  throw new InstallOptionError(
    `--kube-subnet-mgr: the weftd being installed (${cmd.join(' ')}) has no Kubernetes subnet manager yet (no --kube-subnet-mgr in its --help); ` +
      'use --etcd-endpoints for a cluster, or --single-node for one machine',
  );
}

/** Reads an existing net-conf.json for --net-conf: must be a JSON object with a Network; returns flannel's Backend.Type if it names one. */
export function readExistingNetConf(path: string): { backendType?: string } {
  if (!isAbsolute(path)) throw new InstallOptionError(`--net-conf: "${path}" must be an absolute path (the unit names it)`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InstallOptionError(`--net-conf: ${path}: ${(e as Error).message}`, { cause: e });
  }
  // Keys case-insensitive, as flannel decodes them.
  const get = (o: unknown, key: string): unknown =>
    o !== null && typeof o === 'object' ? Object.entries(o).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1] : undefined;
  if (typeof get(doc, 'Network') !== 'string' && get(doc, 'EnableIPv4') !== false) throw new InstallOptionError(`--net-conf: ${path} has no "Network"`);
  const type = get(get(doc, 'Backend'), 'Type');
  return typeof type === 'string' ? { backendType: type } : {};
}
