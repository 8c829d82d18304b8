// weftd's command line -> WeftdOptions: flag names as flannel spells them where flannel has them.
import { Command } from 'commander';
import { parseIp } from '../lib/ip/index.ts';
import { checkIfaceFlag, checkIpFlag, checkIpv4Flag, checkIpv6Flag, checkUrlFlag } from './flag-values.ts';
import { leaseSourceFlags, withEtcdSecurityOptions, WEFTD_DEFAULTS, type RawLeaseSourceFlags } from './inspect.ts';
import { normalizeStoreFlags, type StoreFlags } from './lease/store-flags.ts';
import { createAgentLog, normalizeLogLevel } from './log.ts';
import { parseListenAddr } from './metrics.ts';
import type { WeftdOptions } from './weftd.ts';
import { normalizeServiceProxyFlags } from './services/flags.ts';

/** The flags as commander hands them over. */
export interface RawFlags extends RawLeaseSourceFlags {
  netConf?: string;
  iface?: string[];
  ifaceRegex?: string[];
  ifaceCanReach?: string;
  publicIp?: string;
  publicIpv6?: string;
  subnetFile: string;
  netConfigPath?: string;
  ipMasq?: boolean;
  subnetLeaseRenewMargin?: string;
  healthzIp?: string;
  healthzPort?: string;
  v?: string;
  metricsAddr?: string;
  resyncInterval: string;
  logLevel?: string;
  leaseTtl?: string;
  kubeSubnetMgr?: boolean;
  kubeconfigFile?: string;
  kubeApiUrl?: string;
  kubeAnnotationPrefix?: string;
  iptablesForwardRules?: boolean;
  serviceProxy?: boolean;
  nodeportAddresses?: string;
  networkPolicy?: boolean;
}

/** Builds the commander program (no parsing yet). */
export function weftdCommand(version: string): Command {
  return withEtcdSecurityOptions(new Command('weftd')
    .description('weft node agent: flannel-compatible subnet leases and the vxlan, host-gw or udp data plane (net-conf Backend.Type)')
    .version(version)
    .option('--net-conf <path>', "flannel net-conf.json (required with the file store; with etcd, default <etcd-prefix>/config)")
    .option('--store <spec>', 'lease store: file:/DIR shared by the nodes of one machine (default file:/var/lib/weft/leases)')
    .option('--etcd-endpoints <urls>', 'etcd v3 endpoints, comma-separated (selects the etcd store)')
    .option('--etcd-prefix <prefix>', 'etcd key prefix (default /coreos.com/network)'))
    .option('--iface <name|ip>', 'uplink interface (name or one of its addresses), repeatable: the first that exists wins; default: the default route\'s', collect)
    .option('--iface-regex <regex>', 'uplink: first address, then interface name matching, repeatable (after --iface)', collect)
    .option('--iface-can-reach <ip>', 'uplink: the interface the main table routes this IP through (after --iface-regex)')
    .option('--public-ip <ip>', 'address advertised to peers (default: the uplink\'s first IPv4 address)')
    .option('--public-ipv6 <ip>', 'IPv6 address advertised to peers with EnableIPv6 (default: the uplink\'s first global IPv6 address)')
    .option('--subnet-file <path>', 'where to write subnet.env', WEFTD_DEFAULTS.subnetFile)
    .option('--net-config-path <path>', 'same as --net-conf (flanneld\'s name)')
    .option('--ip-masq', 'masquerade traffic leaving the cluster Network (nftables)')
    .option('--subnet-lease-renew-margin <minutes>', 'renew the lease this long before it expires, 1..1439', '60')
    .option('--healthz-ip <ip>', 'address of the /healthz server (with --healthz-port)', '0.0.0.0')
    .option('--healthz-port <port>', 'serve /healthz (and /metrics) on this port; 0: off', '0')
    .option('--v <level>', "klog verbosity as flanneld takes it: 0 is --log-level info, more is debug")
    .option('--metrics-addr <host:port>', 'serve /metrics and /healthz here')
    .option('--resync-interval <ms>', 'safety-net reconcile period in ms (events act sooner)', '1000')
    .option('--lease-ttl <seconds>', 'lease TTL (default 86400, flannel\'s 24 h)')
    .option('--log-level <level>', 'debug, info, warn or error (default info)')
    .option('--kube-subnet-mgr', 'leases are Kubernetes Nodes (podCIDR + annotations), node name from NODE_NAME')
    .option('--kubeconfig-file <path>', 'kubeconfig for --kube-subnet-mgr (default: in-cluster service account)')
    .option('--kube-api-url <url>', 'Kubernetes API server URL (overrides the kubeconfig\'s server)')
    .option('--kube-annotation-prefix <prefix>', 'node annotation prefix (default flannel.alpha.coreos.com)')
    .option('--iptables-forward-rules', 'accept traffic from/to the Network in other tables\' forward chains whose policy is drop (default)')
    .option('--no-iptables-forward-rules', 'add no such accepts (and remove those weftd added earlier)')
    .option('--service-proxy', 'program Services (ClusterIP, NodePort, LoadBalancer) in nftables instead of kube-proxy; needs the kube API and NODE_NAME')
    .option('--nodeport-addresses <cidrs>', 'with --service-proxy: NodePorts only on local addresses in these CIDRs (default: every local address but loopback)')
    .option('--network-policy', 'enforce networking.k8s.io/v1 NetworkPolicy in nftables (inet weft-policy; kube API as --kube-subnet-mgr reaches it)')
    .addHelpText('after', NET_CONF_HELP);
}

function collect(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), v];
}

/** The net-conf.json keys, for --help (docs/weftd.md has the whole story). */
const NET_CONF_HELP = `
net-conf.json (flannel's keys, matched case-insensitively):
  Network                    cluster IPv4 network (required unless EnableIPv4 is false)
  SubnetLen, SubnetMin/Max   node subnet size and range (flannel's defaults)
  EnableIPv4, EnableIPv6     families to lease (true, false)
  IPv6Network, IPv6SubnetLen, IPv6SubnetMin/Max
                             with EnableIPv6: the cluster IPv6 network, node subnets /64 by default
  Backend.Type               vxlan | host-gw | udp (udp when Backend is absent, as flannel)
  Backend.VNI, Port, MTU     vxlan: VNI 1, port 8472; udp: port 8285; MTU: uplink minus overhead
  Backend.DirectRouting      vxlan: plain routes to peers on the uplink's subnet (false)
  Backend.ChecksumOffload    vxlan: auto | off | on (default auto). TX checksum offload on flannel.<VNI>:
                             auto turns it off only on kernels older than 5.7 (VXLAN checksum bug
                             under NAT, flannel#1279); off always applies that workaround; on never.`;

/**
 * Validates the parsed flags; throws an Error naming the flag and value. Every flag is checked here,
 * before weftd opens anything: what only the node can tell (does the interface exist, can the port
 * be bound, can subnet.env be written) Weftd.start checks next, still before the lease store.
 */
export function normalizeWeftdFlags(f: RawFlags, env: NodeJS.ProcessEnv = process.env): WeftdOptions {
  if (f.netConf !== undefined && f.netConfigPath !== undefined) throw new Error('--net-conf and --net-config-path are the same flag; give one');
  const netConf = f.netConf ?? f.netConfigPath;
  if (netConf === '') throw new Error('--net-conf (--net-config-path) "" names no file');
  if (f.kubeApiUrl !== undefined) checkUrlFlag('kube-api-url', f.kubeApiUrl);
  if (f.kubeconfigFile === '') throw new Error('--kubeconfig-file "" names no file (leave it out for the in-cluster account)');
  const publicIp = f.publicIp !== undefined && f.publicIp !== '' ? checkIpv4Flag('public-ip', f.publicIp) : undefined;
  for (const i of f.iface ?? []) checkIfaceFlag(i);
  if (f.ifaceCanReach !== undefined) checkIpFlag('iface-can-reach', f.ifaceCanReach);
  const storeFlags = {
    ...leaseSourceFlags(f),
    ...(netConf !== undefined ? { netConfPath: netConf } : {}),
    ...kubeStoreFlags(f, env),
  };
  normalizeStoreFlags(storeFlags);
  const publicIpv6 = normalizePublicIpv6(f.publicIpv6);
  const marginMin = Number(f.subnetLeaseRenewMargin ?? '60');
  if (!Number.isInteger(marginMin) || marginMin < 1 || marginMin > 1439) {
    throw new Error(`--subnet-lease-renew-margin ${JSON.stringify(f.subnetLeaseRenewMargin)} must be an integer from 1 to 1439 (minutes)`);
  }
  const metricsAddr = healthzAddr(f);
  const resyncMs = Number(f.resyncInterval);
  if (!Number.isInteger(resyncMs) || resyncMs < 100 || resyncMs > 3_600_000) {
    throw new Error(`--resync-interval ${JSON.stringify(f.resyncInterval)} must be an integer from 100 to 3600000 (ms)`);
  }
  let ttlSeconds: number | undefined;
  if (f.leaseTtl !== undefined) {
    ttlSeconds = Number(f.leaseTtl);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 5) throw new Error(`--lease-ttl ${JSON.stringify(f.leaseTtl)} must be an integer of at least 5 (seconds)`);
  }
  if (metricsAddr !== undefined) {
    // A host name would be resolved only when the server starts: an address or localhost is known now.
    const { host } = parseListenAddr(metricsAddr);
    if (host !== 'localhost' && parseIp(host) === null) throw new Error(`--metrics-addr ${JSON.stringify(metricsAddr)}: ${JSON.stringify(host)} is not an IP address (or localhost)`);
  }
  if (!f.subnetFile.startsWith('/')) throw new Error(`--subnet-file ${JSON.stringify(f.subnetFile)} must be an absolute path`);
  const serviceProxy = normalizeServiceProxyFlags(f, env);
  const log = createAgentLog(normalizeLogLevel(logLevel(f)));
  const ifaceRegex = (f.ifaceRegex ?? []).map((r) => {
    try {
      return new RegExp(r);
    } catch {
      throw new Error(`--iface-regex ${JSON.stringify(r)} is not a valid regular expression`);
    }
  });
  return {
    store: { ...storeFlags, renewMarginMs: marginMin * 60_000, ...(ttlSeconds !== undefined ? { ttlSeconds } : {}) },
    uplink: {
      ...(f.iface !== undefined ? { iface: f.iface } : {}),
      ...(ifaceRegex.length > 0 ? { ifaceRegex } : {}),
      ...(f.ifaceCanReach !== undefined ? { ifaceCanReach: f.ifaceCanReach } : {}),
      ...(publicIp !== undefined ? { publicIp } : {}),
    },
    ...(publicIpv6 !== undefined ? { publicIpv6 } : {}),
    subnetFile: f.subnetFile,
    ipMasq: f.ipMasq === true,
    forwardRules: f.iptablesForwardRules !== false,
    ...(f.networkPolicy === true ? { networkPolicy: { ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}), ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}) } } : {}),
    ...(metricsAddr !== undefined ? { metricsAddr } : {}),
    resyncMs,
    ...(serviceProxy !== undefined ? { serviceProxy } : {}),
    // Coalesces a burst of notifications (our own writes echo back too) into one pass.
    debounceMs: 20,
    log,
  };
}

/** --public-ipv6 (flanneld's flag, FLANNELD_PUBLIC_IPV6): an IPv6 address in Go's text form; empty means auto-detect. */
function normalizePublicIpv6(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : checkIpv6Flag('public-ipv6', v);
}

/** The --kube-subnet-mgr part of the store flags (NODE_NAME, POD_NAME, POD_NAMESPACE read only in that mode). */
function kubeStoreFlags(f: RawFlags, env: NodeJS.ProcessEnv): Partial<StoreFlags> {
  return {
    ...(f.kubeSubnetMgr === true ? { kubeSubnetMgr: true, ...(env.NODE_NAME ? { nodeName: env.NODE_NAME } : {}), ...(env.POD_NAME ? { podName: env.POD_NAME } : {}), ...(env.POD_NAMESPACE ? { podNamespace: env.POD_NAMESPACE } : {}) } : {}),
    ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}),
    ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}),
    ...(f.kubeAnnotationPrefix !== undefined ? { kubeAnnotationPrefix: f.kubeAnnotationPrefix } : {}),
  };
}

/** --metrics-addr, or flanneld's --healthz-ip/--healthz-port (port 0: off); both at once is refused. */
function healthzAddr(f: RawFlags): string | undefined {
  const port = Number(f.healthzPort ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--healthz-port ${JSON.stringify(f.healthzPort)} must be a port number (0: off)`);
  const ip = checkIpFlag('healthz-ip', f.healthzIp ?? '0.0.0.0');
  if (port === 0) return f.metricsAddr;
  if (f.metricsAddr !== undefined) throw new Error('--healthz-port and --metrics-addr both name the /healthz server; give one');
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** --log-level, else klog's --v (flanneld units pass -v=N). */
function logLevel(f: RawFlags): string | undefined {
  if (f.logLevel !== undefined || f.v === undefined) return f.logLevel;
  const v = Number(f.v);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--v ${JSON.stringify(f.v)} must be a non-negative integer`);
  return v === 0 ? 'info' : 'debug';
}
